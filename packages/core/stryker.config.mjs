// @ts-nocheck
// StrykerJS for this package: `pnpm mutate core` from the repository root (see README, "Mutation
// testing"). Mutants are made in place, in this folder, so that the runner uses the workspace's
// vitest.workspace.ts (its projects and the @tickwork/source condition); a sandbox copy would be
// tested against the original sources. Results: reports/mutation/ (git-ignored).
// Equivalent mutants (no test can tell them apart) are listed here, each with its reason, and
// disabled at their line with a `// Stryker disable next-line <Mutator>: equivalent, <reason>`.
// Equivalent mutants:
// - Schedule.ts, `preview`: the policy "catch-up" given to `nextAfterRun` (StringLiteral). Each
//   preview slot "ends" at its own slot, so no grid slot is missed and `MissedRun.next` returns
//   the nominal next slot before it reads the policy: any string gives the same preview.
// - Heap.ts, `batch` and `RunCodec.fit`: `<` as `<=` (and `>` as `>=`) in the running minimums
//   and maximums (EqualityOperator, disabled): on a tie the bound is assigned the value it has.
// - Heap.ts, `RunCodec`: `ranked`'s initial `false` (BooleanLiteral, disabled: `fit` sets it
//   before `pack` reads it) and `ranked = rankBits > 0` as `true` or `>= 0` (disabled: with an
//   empty rank field every entry's rank is `minRank`, so reading it from the order gives the same).
// - internal/rules/settle.ts: the initial values of `Completion`, `SettledCell`, the scratch's
//   context and the record buffer (BooleanLiteral, StringLiteral, ObjectLiteral; disabled):
//   each is written before it is read; the completion's name "FAIL"/"SUCCEED" (disabled): the
//   machine's step is chosen by the event index.
// - internal/rules/validate.ts, the one-shot fast path (disabled): it computes what
//   `Schedule.resolve` computes, so taking it or not cannot be told apart.
// - internal/rules/{handBack,take,resume}.ts: the context of UNREADABLE, EXPIRE and RESUME as
//   `{}` (ObjectLiteral, disabled): those steps read no context (RESUME only writes the count).
// Equivalent, but left enabled because their line holds killed mutants of the same mutator
// (a disable comment would switch those off too):
// - internal/rules/settle.ts: the memo tests `!this.breakerAsked` and `!this.computed` as
//   `true` (the breaker's answer and the next slot are pure, and the machine reads each once);
//   `row.resumeFrom ?? -1` as `+1`, `resumeFrom >= 0` as `true`/`> 0`/`||`, and
//   `skippedTo !== undefined` as `true` (a grid slot at or before a resume at or before 0 is
//   never after a slot >= 0, and `undefined > n` is false); `skippedTo > from` as `>=` (on a
//   tie `from` is assigned the value it has); `breakerAsked && breakerAnswer` as `||` (an
//   answer exists only when asked).
// - internal/rules/take.ts: `due < now` as `true`/`<=` and `latest !== undefined` as `true` in
//   the coalesce test (a row due at or after now has no later passed slot); `t.slot > limit` as
//   `false`/`>=` in `takePlan` (a row moved to or past `limit` always starts on the next take).
// - internal/rules/resume.ts: `first !== undefined && last !== undefined` as `true` or `||`
//   (`first <= last` is false when either is undefined).
// - internal/rules/validate.ts: `tags.length === 0` as `false` (an empty frozen copy instead of
//   the shared empty list); in `keysWith`, `change.without ?? []` as a list of one made-up key
//   (deleting a key the set does not hold changes nothing).
// - Breaker.ts: in `afterSlot`, `opensOnFailure(status, policy, false)` with `true` (a closed
//   breaker does not read `probe`); `m.state === "paused"` in `isHeld` and `m.state ===
//   "running"` in the closing's unhold filter as `true` (a `Member` has a `pausedReason` only
//   when paused and a `pauseRequest` only when running); in a probe's `Left`/`PausedByHand`,
//   `cell.status.state !== "half-open"` as `false` (a breaker has a probe only while half-open)
//   and the filter of the leaving task from the candidates (it has left the members, or is
//   paused by hand, so it is never a held candidate).
// - internal/rules/handBack.ts: `state === "paused"` as `true` (a hand-back ends `paused`
//   exactly when a pause was requested, so the reason is that request either way).
// - Heap.ts, an order-key tie, `<` as `<=` on the order in `push`, `siftDown` (twice), `verify`
//   and `pickTop`: order keys are unique (ground rule 2), so two entries never tie on it.
// - Heap.ts, `RunCodec.pack`: `2 * j + LOW` as `2 * j - LOW`: LOW is 0 on a little-endian
//   machine (every platform Node runs on here), where the two are the same index.
// - Heap.ts, guards and bounds with no effect: `mergeRun`'s `runHead === runEnd` as `false`
//   (merging an empty run adds nothing), its room `n + runEnd - runHead` as `+ runHead` (only
//   more room), `shift`'s `p < this.n` as `<=` (the entry past the tree is never read again),
//   `heapify`'s first parent `(end - 2) >> 2` as `end + 2` (sifting leaves moves nothing).
// - Heap.ts, `RunCodec.fit`: `minRank !== maxRank` as `true` (the sequence numbers' range is
//   then computed by a pass that gives the same range for a batch of one priority).
// Equivalent, named but not disabled at their line yet (they count as survivors in the scores
// measured with them, see the README):
// - internal/rules/limits.ts: in `scopesOf`, `handler !== undefined` as `true` (a handlers map is
//   keyed by names from `Object.entries`, so it never has `undefined`) and `typeof group !==
//   "string"` as `false` (nor any other non-string: `!groups.has(group)` refuses it alike); in
//   `rateOpensAt`, `rateMax === Number.POSITIVE_INFINITY` as `false` (a count of starts is
//   always `< Infinity`, so the next test returns `at` just the same).
// - internal/dedup.ts, `request`: `done === false ? undefined : done` as `done === true ? …` or
//   `false ? …` (`updateTask` never returns false here: a `replaced` decision means a current
//   holder that is scheduled or paused, which it finds and may update), and `stateOf`'s `"unknown"` as `""`
//   (`Rules.decideDedup` reads any state other than scheduled, running and paused alike).
// - internal/limits.ts (the kernel's flow control), each changing no decision and no count a
//   caller can read: `Flow.loads`' initial `[]` (emptied before each use); the `at` getter's `<` as
//   `<=` (a tie); in `admit`, `until` taken from a concurrency decision (it has none) and
//   `until < cell.opensAt` as `<=`, `true && …` or `||` (a tie; `undefined < n` is false); in
//   `started`, the trimming of start times (`>= 2 * max` as `>`, `<`, `2 / max`, `true`,
//   `false`): it changes only how many are kept, always at least the last `rateMax`, which is
//   all `rateOpensAt` reads (memory, SPEC §20.5, is not observable through the API; `- max`
//   as `+ max`, which drops them all, is killed); in `sweep`, `expiry.size > 0` as `true` or
//   `>= 0` (an empty heap's `topAt()` is undefined, and `undefined <= now` is false); in
//   `release`, `queue.size === 0` as `false` (the loop does not run on an empty queue); in
//   `settle`, `cell.expiring = true` as `false` (a duplicate expiry entry settles the cell
//   once more, which finds it dropped or still needed); `waitsFor`'s `cell === undefined`
//   guard (its cell holds every waiter, ground rule 4); in `waitingCounts`, the `isLive` guard
//   as `false` and `w !== undefined` as `true` (`waitingOf` gives no wait for a dead entry,
//   whose state or ticket differs, and one for every live one); in `waitingOf`, the tests of
//   `flow instanceof Flow` and `extra?.scopes` (a row with a wait always has both), and
//   `w.cause === "concurrency" && w.scope === name` (it returns a wait equal to `w` either
//   way); `ExpiryHeap.pop`'s child choice `<` as `<=` (a tie); `ExpiryHeap.push`'s
//   `ats.push(at)` and `cells.push(cell)` removed (the sift writes index `k`, the old length,
//   last, which grows the array alike).
// - internal/limits.ts, `taken`: `list[k] !== i` as `true`, `k === list.length` as `false`,
//   `true` or `!==`, and `moved?.letGoBy === cell` as `true`, `false`, `!==` or `moved.letGoBy`:
//   each leaves only stale entries in a let-go list (a row taken, or an index out of date that
//   makes its own later `taken` a no-op), never drops a live one. A stale entry lowers a
//   concurrency cell's computed room by one, and a release with waiters left finds the true room
//   at most 1 (each end, leaving or re-queue asks the cell at once), so the room it computes is
//   then <= 0 and `prune` drops the stale entries first; a rate cell prunes whenever its list is
//   not empty. (Removing a live entry, `list[k] !== i` as `false` or `list[k] = last` removed, is
//   killed.)
// - internal/limits.ts, `release`'s prune test `(room <= 0 || rated) && cell.letGo.length > 0` as
//   `true`, `||`, `(true) && …` or `length >= 0`, and `settle`'s `cell.letGo.length > 0` before
//   its `prune` as `true` or `>= 0`: each prunes more often, and `prune` drops only stale
//   entries, which (see `taken` above) never cost a place; on an empty list it returns 0.
// - internal/shift.ts: `delta === 0` as `false` (a zero shift adds 0 to every time and rebuilds
//   each fixed-rate grid as it was) and `i < rows.top` as `<=` (the row at the top is not in use: it
//   has no extras, and its slot, moved or not, is written when a task takes the row). Left enabled: their lines hold killed mutants
//   of the same mutators.
// - internal/take.ts, `movedAtTake`: `case "Start"` as `case ""` (the switch then returns
//   `undefined`, which its one caller reads as `false`, as for a start).
// internal/limits.ts and internal/take.ts (the kernel's flow control and take), issue 29:
// - Now disabled at their line (named above): limits' `Flow.loads` initial `[]`; `open`'s
//   `this.timed.delete(cell)` removed (a cell left in `timed` with `opensAt` +Infinity lowers no
//   `at`, and `open` skips it; memory only); `taken`'s `moved?.letGoBy === cell` (every mutant of
//   that line); `settle`'s `cell.expiring = true` as `false`; `ExpiryHeap.push`'s two pushes;
//   take's `case "Start"` as `case ""`; `started`'s trim test (its `if` now on its own line,
//   so `- max` as `+ max` in the splice, killed, stays enabled).
// - Newly named, disabled: a `ScopeCell`'s initial `starts` and `letGo` as `["Stryker was
//   here"]`: a placeholder start is read as NaN, which no window comparison counts (`NaN > x`
//   and `x + NaN > now` are false), and the first trim drops it; a placeholder let-go entry is
//   stale (no row's `letGoBy` is the cell) and `prune` drops it at the cell's first release with
//   a queue (the room is then short: a queue exists only once the scope was full). take.ts's
//   `rows.load` and `Lifecycle.step(SCHEDULED, EXPIRE, …)` removed: EXPIRE has no guard and no
//   action, so the step only confirms the edge whose target `Rules.expire()` names.
// - Newly named, left enabled (their line holds killed mutants of the same mutator): limits'
//   `settle`, `last !== undefined` as `true` (`undefined + n > now` is false) and `!cell.expiring`
//   as `true` (a duplicate expiry entry, as above); `ExpiryHeap.push`'s `<=` as `<` and `pop`'s
//   `>=` as `>` (a tie); `pop`'s `child + 1 < n` as `true`, `<= n` or `child - 1 < n` (it then
//   reads index `n`, just popped: `undefined < x` is false); `waitingOf`'s last test, `w.cause ===
//   "rate-limited" && …` as `true` or `false`, `!==`, or `""` for the cause (a concurrency `w`
//   has no `until`, so it is never returned as is, and a rate `w` is returned as an equal new
//   wait). take.ts's `plan.merged === undefined` as `false` (a Move ends on a skip or a
//   coalesce, so `merged` is undefined only with `skipped`, where `mergeDropped(undefined,
//   undefined)` is undefined).
// Lifecycle, Declared, Driver, Task, Retry, Results, Options, Errors, Time, Clock, MissedRun:
// - Driver.ts (disabled): `execute`'s closing `this.flush(0)`, and `simulate`'s `drain()` after
//   scheduling and after each `complete` (CallExpression): the next step's flush or drain, which
//   every caller does right after its next `takeDue` and before it reports anything more, hands
//   the same occurrences on in the same order.
// - Driver.ts, left enabled (their lines hold killed mutants of the same mutators): in `runUntil`
//   and `simulate`, `run.startedAt > now` as `true` or `>=` (a run starts at `max(now, slot)`, so
//   the clock is at most set to the time it has); `clock.now() < end` as `<=` (setting the time it
//   has); in `execute`, `record` as `true` and `r !== undefined` as `true` (`complete` gives no
//   record only when none was asked for, that is when there is neither `onRun` nor a tick to
//   take it); in `simulate`, `field === "until" && value < from` as `true && …` (`from < from` is
//   false), and `options.breakers === undefined` / `options.random === undefined` as `false` (the
//   kernel reads a missing option and one given as `undefined` alike, `?? default`).
// - Lifecycle.ts, `compile`, left enabled: `guardName === undefined` as `false` (a machine's
//   implementations have no guard named "undefined", so the lookup gives `undefined` alike) and
//   `name.startsWith("schedule")` as `startsWith("")` (every name in `effectNames` starts with
//   "schedule", so `effectNames.has` decides alone).
// - Lifecycle.ts, `compile`: `d.target?.[0]?.key` as `d.target?.[0].key` (a transition without
//   a target has `target` undefined, never an empty list, so the chain stops at `?.[0]` alike).
// - Declared.ts, `sameSchedule`, left enabled: `b.kind === "custom"` as `true` (a schedule of
//   another kind has no `next`, and `Object.is(fn, undefined)` is false). (`sameData`'s
//   `typeof a !== "object" || typeof b !== "object"` weakened is not equivalent: `undefined` on
//   one side reaches `Object.getPrototypeOf(undefined)`, which throws; see below.)
// - Errors.ts, `show`: `value !== null` as `true` (`JSON.stringify(null)` is "null", as
//   `String(null)`), and the `catch` block emptied (it falls through to the same `String(value)`).
// - Options.ts, `millis`: `typeof ms === "number"` as `true` (an error is never `=== 0`).
// - Results.ts, `keep`: the fast path `json.length * 3 <= limit` as `false` or `<` (the exact
//   count that follows gives the same answer; the fast path only saves the count).
// - MissedRun.ts: the cron grids' `catch` blocks emptied (the function then returns `undefined`,
//   what the block returns); in `countBySteps`, `s !== undefined` as `true` (`undefined <= to` is
//   false); in `periodic`'s `steps`, the upward correction `(k + 1) * period <= d` as `false` or
//   `<` (IEEE division of integers rounds to nearest, so a floor below the true quotient was not
//   found for safe inputs; the downward correction is reachable past 2^53 ms and is tested).
// Kernel.ts and the kernel internals accept, run, update, pause, manual:
// Equivalent, disabled at their line:
// - Kernel.ts: `outcome`'s initial "created" (StringLiteral): `schedule` writes it before
//   `scheduleDeduplicated` reads it, on every path that returns an id.
// - internal/accept.ts: `acceptRow`'s default `scopes = []` (ArrayDeclaration: its one caller, the
//   kernel, always passes them); `schedule?._tag` as `schedule._tag` (OptionalChaining: a validated
//   task always has a schedule); `missedRuns !== "catch-up"` as `!== ""` (StringLiteral: it only
//   creates the side object for more tasks, and a side object of defaults reads as none).
// - internal/manual.ts: `rows.load` and `Lifecycle.step` in `triggerRow` and `retryRow` removed
//   (CallExpression: the step's edge is not read; the caller checked the state, and the row code
//   writes the transition itself); `extra.manual` as "trigger" or "slot" whatever the `slot`
//   (ConditionalExpression, EqualityOperator: the kernel reads both as a manual run alike); the
//   pending run given to `Rules.triggered` as `{}` (ObjectLiteral: a trigger's run is `now`'s, attempt
//   1, whatever is kept); `dropManual`'s `return false`/`return true` flipped (BooleanLiteral: no
//   caller reads its result).
// - internal/pause.ts: `resumeRow`'s `pausedReason ?? "manual"` as `""` (StringLiteral: every entry
//   to `paused` goes through `hold`, which sets the reason); `manual === undefined || kept ===
//   undefined` as `&&` (LogicalOperator: `manual` is undefined exactly when `kept` is).
// Equivalent, left enabled because their line holds killed mutants of the same mutator:
// - internal/accept.ts: `replaced >= 0` as `true` (`rows.present(-1)` is false: the typed arrays
//   read `undefined` at -1); the side-object test (`id !== undefined || … || dedup !== undefined`)
//   as `true` (a side object of defaults reads as none: only memory differs); in `reusableRow`,
//   `id === undefined` as `false` (the id map has no `undefined` key).
// - internal/manual.ts: `restore`'s `kept === undefined` as `false` (`restore` runs only for a row
//   with a kept run: `dropManual` checks it, and a running manual run always has one); in
//   `endManual`, `edge.target === PAUSED` as `true` for the record's reason (the pause request is
//   undefined unless the edge goes to `paused`); in `retryRow`, `extra.plan !== undefined` as
//   `false` (a failed recurring task has no window: fixed rate and cron always have a next slot, a
//   custom schedule takes none); in `retrySlot`, `i < 0` as `false` twice (the typed arrays read
//   `undefined` at -1, and an unknown task's state is not "scheduled") and `state !== "scheduled"`
//   as `false` (core reads the pending slot of a scheduled task only).
// - internal/pause.ts: in `resumeTask`, `extra === undefined` as `false` (a running row with no side
//   object has no pause request, so the RESUME step refuses it alike); in `pauseRow`, the
//   final-state test as `false` (`Rules.pauseStep` ignores a final state; the side object it then
//   creates holds defaults); in `resumeRow`, `r.resumeFrom >= 0` as `true` or `> 0` (as in
//   internal/rules/settle.ts above) and `manual === undefined` or `kept === undefined` as `false`
//   (both are undefined or neither is).
// Equivalent, named but not disabled at their line yet (internal/update.ts, `applyUpdate`):
// - `resolved !== undefined` or `changes.schedule !== undefined` alone as `true`, or their `&&` as
//   `||`, in the two schedule tests (a validated change has `resolved` exactly when it has a
//   schedule); the
//   `step.schedule === "now" && resolved !== undefined` test as `true` on either side or `||` (the
//   rules answer "now" only for a schedule change, which has `resolved`); `resumeFrom = -1` as `+1`
//   (as in internal/rules/settle.ts above); `step.leave && unheldOnLeave(…)` as `||` (a task that
//   joins without leaving had no breaker, so none holds it); `state === PAUSED` as `true` (a row
//   has a `pausedReason` only while paused) and `state === RUNNING` as `true` (a breaker's pause
//   request only while running); `rows.load` and `Lifecycle.step` of the withdrawn request removed
//   (CallExpression: the step's edge is not read).
// Cron (internal/cron.ts, cronExpression.ts, cronWords.ts, zone.ts; issue 29). Equivalent, named but
// not disabled: each shares its line with killed mutants of the same mutator.
// - internal/cron.ts, `specialPart`: `push(…) > 0` as `>= 0` (`push` returns the new length, at
//   least 1); the `n#k` pattern without `^` or without `$` (`[^#]+` before the `#` anchors it at
//   the start, and a field holds no line break for `.*` to stop at).
// - internal/cron.ts: `inDaysOfMonth`'s early `return false` for a field without `L`/`W` forms,
//   skipped (the tests after it find nothing in empty lists); `dayMatches`' `dom.any && dow.any`
//   as `false` (a `*` field holds every value, so the test it falls to is true as well);
//   `matchesLocal`'s whole-second test as `true` (every caller passes a slot, a whole second);
//   `last`'s start `values.length + 1` (the reads past the end are `undefined`, and
//   `undefined <= n` is false); `nextLocal`'s `year <= limit` as `<` and `prevLocal`'s
//   `year >= limit` as `>` (every date pattern recurs well within the calendar's 400-year cycle);
//   the day loops' month wrap emptied, in `nextLocal` and `prevLocal` (month 13 or 0 is in no
//   month field, so the month-skipping branch wraps it on the next turn); `isError`'s
//   `x !== null` as `true` (a field value is a number or a `ParseError`, never null).
// - internal/cronExpression.ts: `parseCron`'s `{ dayMatch: "either" }` as `{ dayMatch: "" }`
//   (the spec reads any value but "both" as either); in `dstNote` for an Effect `Cron`,
//   `other === here` as `false` (the twin is then the slot itself, which the next test skips),
//   `twin !== slot` as `true` (a twin differs from the slot whenever the offsets differ) and
//   `slot < twin` as `<=` (never equal there).
// - internal/cronWords.ts: `listed`'s `items[0] ?? ""` (never called with an empty list); in
//   `evenStep`, `values[0] !== 0` as `false` (the `every` test fails at index 0 then),
//   `k === undefined` as `false` (`size % undefined` is NaN, `!== 0`) and `size % k !== 0` as
//   `false` (a k not dividing size makes `size / k` no whole length), and those three tests
//   grouped as `(a || b) && c` or `a && b` (each case they let through fails a later test); the `coarser` filter's
//   pattern without `^` or without `$` (every part is `every <unit>`, `every <k> <unit>s` or
//   `<unit> <list>`, read alike by all three); `hitsVixieRule`'s `dom.star || dow.star` as
//   `true` (the spec's dayMatch is "both" only when a field starts with `*` or `?`).
// - internal/zone.ts: the caches (`formatter`'s `f === undefined` as `true`; in
//   `transitionsOfYear`, `byYear === undefined` as `true`, `known !== undefined` as `false`,
//   `cache.set` and `byYear.set` removed): each recomputes the same value; `isZone`'s `catch`
//   emptied (it returns `undefined`, which callers read as false); `naive`'s `year >= 100` as
//   `false` or `> 100` (the 400-year shift is exact for every year Date can shift);
//   `offsetAt`'s `m === null` as `false` and its message (en-US with an era always matches) and
//   `m[4] === "B"` (the short era is "BC"; "B" is the narrow form); `transitionsOfYear`'s first
//   sample `start - 1000` as `+ 1000` and `hi < end` as `true` or `<=` (they differ only for a
//   transition in the first second of a UTC year: no zone has one from 1970 to 2040, checked
//   against every zone the host knows).
// internal/breakers.ts, internal/queries.ts, internal/explain.ts (the breaker glue and the read-only
// queries), issue 29:
// - breakers.ts, `resumeAt`: the kept run given to `Rules.resumeManual` as `{}` (ObjectLiteral,
//   disabled): only the result's `dueAt` is read, and it is the row's own due time (the waiting
//   manual run's), whatever the kept run.
// - breakers.ts, `opensOnFailure`: `extra(i)?.breaker` as `extra(i).breaker` (OptionalChaining,
//   disabled) and the `cell === undefined` guard as `false` (left enabled: its line holds a killed
//   ConditionalExpression) and its `return false` as `true` (BooleanLiteral, disabled): the kernel
//   asks a row's breaker only when the row has one (it settles a row without a breaker with the
//   context that has no `breakerOpens`), so the guard is never taken.
// - breakers.ts, named, left enabled (their lines hold killed mutants of the same mutators): in
//   `leave`, `cell.status.state === "open"` as `true` before `updateTimer` (a dropped cell that is
//   not open lowers no half-open time); in `halfOpen`, `cell.status.state !== "open"` as `false`
//   and in `updateTimer` `cell.status.state === "open"` as `true` (a cell that is not open has
//   `halfOpenAt` +Infinity), and `updateTimer`'s `<` as `<=` (a tie); in `step`, `byId.get(id) ??
//   this.rows.lookup(id)` as `&&` (the map caches exactly what `lookup` returns).
// internal/update.ts (second pass), and Kernel.ts's, manual.ts's and pause.ts's open questions:
// - Now disabled at their line (named above): update's `&&` as `||` in the two schedule tests
//   and in `step.schedule === "now" && resolved !== undefined` (LogicalOperator), `resumeFrom =
//   -1` as `+1` (UnaryOperator), `step.leave && unheldOnLeave(…)` as `||` (LogicalOperator), and
//   the withdrawn request's `rows.load` and `Lifecycle.step` removed. Left enabled, their lines
//   holding killed mutants of the same mutator: either side of those `&&` as `true`, and `state
//   === PAUSED` and `state === RUNNING` as `true`.
// - Newly named, disabled: update's breaker change `"remove"` as `""` (StringLiteral):
//   `Rules.updateStep` reads that change only as `!== "keep"` and `=== "change"`, so any other
//   string is a removal. manual.ts, `retrySlot`'s `attempt > 1 && extra !== undefined` as `||`
//   (LogicalOperator; the invariant below).
// - Newly named, left enabled (their lines hold killed mutants of the same mutators):
//   manual.ts, `retrySlot`'s `attempt > 1` as `true` or `>= 1`, and `extra !== undefined` as
//   `true`: a `scheduled` row at its first attempt with no manual run waiting has its grid slot
//   equal to its heap slot (every writer sets both alike: accept, take's move, settle's next
//   slot, resume, whose `slot` is its `dueAt` below a retry, a manual run's restore, an update's
//   new schedule, `shift`, which moves both or, for a wall-clock row, neither), and a retry
//   (attempt > 1) always has a side object. (The whole test as `true` reads the side object of
//   a row with none, killed.) Kernel.ts, `limits.groups.size > 0` as `true` or `>= 0`: a flow
//   object with no group and no key limit has no scope a task can join (`scopesOf` refuses a
//   group or key then, and a task with none has no scopes), so nothing waits in it, its `at` is
//   +Infinity, `opened` is false, and its counts are the zeros of no flow. pause.ts, `pauseRow`'s
//   `cell.probe === i` as `true`: `PausedByHand` for a task that is not the probe gives the
//   unchanged plan (same status and probe, no transition, none held or unheld).
// Lifecycle, Declared, Clock, Errors, Options, Retry, MissedRun, measured whole (2026-12-02):
// - Declared.ts, `sameData`: `typeof a !== "object" || typeof b !== "object"` as `&&`, or either
//   side as `false`, named equivalent above until now, is killed by `decide: an object on one
//   side only` (test/Declared.test.ts): a breaker policy or an object-valued store option that
//   only one side has compared `undefined` with an object and threw.
// - Declared.ts, `sameSchedule`: `x._tag === "ParsedCron" && y._tag === "ParsedCron"` as `||`
//   (LogicalOperator, disabled) or either side as `true` (left enabled: the line's other
//   ConditionalExpression mutants are killed). A cron plan holds a parsed cron, whose `timeZone`
//   is always a zone name, or an Effect `Cron`, which has no `timeZone` (it has `tz`): with one of
//   each, `x.timeZone === y.timeZone` is false, as `Object.is(x, y)` is.
// - Declared.ts, `definitionOf`: `a.plan === undefined` as `true` (left enabled, its line holds
//   killed ConditionalExpression mutants): a schedule tagged "At" always resolves to a one-shot,
//   whose plan is undefined, so the tag decides alone.
// - Lifecycle.ts, `compile`: `name.startsWith("schedule")` as `startsWith("")`, named above, is
//   now disabled (StringLiteral, the only one on its line).
// - Retry.ts, `resolve`, left enabled (their lines hold killed mutants of the same mutator):
//   `typeof factor !== "number"` as `false` (`Number.isFinite` is false for every non-number, so
//   the next test refuses it alike); the shared `none` returned only for an empty policy, its
//   test as `false` (a fresh object with `none`'s values: the kernel reads `retry !== Retry.none`
//   only to give a task a side object, and a side object of defaults reads as none). The same
//   test's `policy.base === undefined` and `policy.factor === undefined` as `true` or `!==` are
//   killed by `resolve: no retries, other fields given` (test/Retry.test.ts).
// - MissedRun.ts, `periodic`'s `steps`: the upward correction's `k++` as `k--` (UpdateOperator,
//   no coverage, left enabled): the branch named above is never taken for safe integers. A
//   `next-line` comment cannot reach it: it sits on the `else` of a brace-less `if`, where the
//   comment attaches to the statement before.
// - MissedRun.ts, `inUtc`: `{ tz: UTC }` as `{}` (ObjectLiteral) survives the mutation run only
//   because Stryker's vitest runner uses worker threads, where `test/CronHostZone.test.ts` cannot
//   move the process's zone and skips itself; run as `pnpm test` (forked processes), `fires at
//   its UTC times, not at the host's local times` fails with it (checked by applying it by hand).
// internal/breakers.ts, internal/explain.ts, Results.ts, internal/zone.ts, issue 29 (2026-12-02,
// second pass; the entries above for these modules stand):
// - Newly named, disabled at their line: breakers.ts `step`'s `members` initial `[]` as a list of
//   one string (ArrayDeclaration: a member with no state is never held, held back or picked), the
//   `"Joined"` test's string as `""` (StringLiteral: a join then goes through `readsMembers`, true
//   for a join, and the step reads only the joining member of the list), the two `byId.set` removed
//   (CallExpression) and the three `byId.get(…) ?? this.rows.lookup(…)` as `&&` (LogicalOperator):
//   the map caches what `lookup` returns, and every probe, held and unheld id is a member it holds;
//   `member`'s `held` test `&&` as `||` (LogicalOperator: `resumeAt` is read only for a held
//   member, `Breaker.Member`'s contract); `unhold`'s two tests `&&` as `||` (LogicalOperator: a row
//   has a `pausedReason` only while paused and a `pauseRequest` only while running) and its
//   `rows.load` and `Lifecycle.step` removed (CallExpression: the step's edge is not read);
//   `info`'s `extra(m)?.pausedReason` as `extra(m).pausedReason` (OptionalChaining: a breaker's
//   member has a side object, which holds its breaker); `probeId`'s `cell.probe >= 0 && …` as `||`
//   (LogicalOperator: with no probe, -1, `gen(-1)` is undefined and `probeGen` 0, so the test fails
//   alike; with one, see the generation below). explain.ts: `extra?.gridSlot` as `extra.gridSlot`
//   for a scheduled retry (three) and a paused task's held retry (OptionalChaining: a retry row and
//   a paused row have a side object); `following`'s `"catch-up"` as `""` (StringLiteral: as in
//   Schedule.ts's `preview` above). zone.ts: the names listed above, where their line holds no
//   killed mutant of the same mutator: `offsetAt`'s message (StringLiteral) and its `throw`
//   (CallExpression, never reached),
//   `transitionsOfYear`'s `start - 1000` as `+ 1000` (ArithmeticOperator) and `byYear.set` removed
//   (CallExpression).
// - Newly named, left enabled (their lines hold killed mutants of the same mutators): breakers.ts,
//   the generation tests in `opensOnFailure` (`cell.probeGen === gen(i)` as `true`) and `probeId`
//   (`cell.probe >= 0` and the generation test as `true`): a cell's probe row is rewritten with its
//   generation whenever its probe changes, and the probe changes whenever its task leaves or is
//   paused, so the row at `cell.probe` is always the probe's own generation; in `step`, the join
//   test as `false` (as its string above), `readsMembers` as `true` (the step gives the same plan
//   with members it does not read), `plan.probe !== probe` as `true` (the same probe gives the same
//   row and generation), `plan.probe === undefined` as `false` (`lookup(undefined)` is -1), `row <
//   0` as `false` (`probeGen` is then `gen(-1)`, undefined, read only after a `cell.probe >= 0` or
//   `=== i` test), `t.to === "half-open"` as `true` (a plan's probe is undefined unless half-open);
//   `member`'s `held`, either side or the whole as `true` (`resumeAt` as above); `unhold`'s tests,
//   either side or the whole as `true` (every unheld id is held by the breaker or runs with its
//   pause request); `info`'s `state === PAUSED` as `true` (`pausedReason` only while paused).
//   explain.ts: `flow === undefined` as `false` (without a flow no row has a wait, so `waitingOf`
//   gives undefined); `cell !== undefined` as `true` twice (a task held by a breaker has its cell);
//   `after !== undefined` as `true` in the first slot's fallback (every branch sets `from` or
//   `after`); `after !== undefined` as `true` in the schedule-change test (a pending change is set
//   only while the slot runs or has a retry pending, which set `after`; believed, not proven for
//   a paused task whose held retry was dropped); `"slot" in next` as `true` (a next without `slot`
//   is an `InvalidTime`, whose `slot` is undefined as well). Results.ts, `utf8Bytes`: `i + 1 <
//   text.length` as `true`, `<=` or `i - 1 < …`: a high surrogate is then read with the unit past
//   the end, NaN, which is not a low surrogate, so it counts 3 bytes as it should (a disable comment
//   is not honoured before an `else if`, where this test is).
// Time.ts and internal/queries, rows, records, table, finalRing, invariants, kernelOptions
// (2026-12-02, issue 29):
// - Time.ts, `toInstant`: `typeof ms !== "number"` as `false` (`Number.isSafeInteger` is false
//   for every non-number, so the test after it refuses the same inputs). Left enabled: the line
//   holds killed ConditionalExpression mutants.
// - internal/records.ts, `RowView`'s initial `missedRuns` ("catch-up" as "") and `resumeFrom`
//   (`-1` as `+1`), disabled: `Rows.rowView` writes every field of the view before the rules
//   read it, in both of its branches.
// - internal/finalRing.ts, `push`'s growth test `tail - reuse > mask` as `>=` or `tail + reuse`
//   (it grows earlier or more often: the doubling keeps every entry at its index, so only memory
//   differs), and the `free` getter's `head - reuse` as `+` (no kernel code reads it; it is a
//   diagnostic). Left enabled: their lines hold killed mutants of the same mutators.
// - internal/invariants.ts: the loop bound `s < STATE_COUNT` as `<=` (both arrays read
//   `undefined` past the last state, which compare equal); the breaker timer's `state === "open"`
//   as `true` (a breaker that is not open has +Infinity, or the next check rejects it) and
//   `halfOpenAt < breakerAt` as `<=` (a tie); the check that an open breaker's paused member has a
//   reason (every mutant of that `if` and its message): it cannot fail after the earlier check
//   that every present paused row has a reason, and a member is present (checked just before);
//   `rows.t.extra(i)?.pausedReason` without `?.` (reached only when the row's side object names
//   the breaker). Left enabled: their lines hold killed mutants of the same mutators.
// - internal/kernelOptions.ts, `breakersOf`: `breakers === null` as `false` (`options.breakers ??
//   {}` has already made `null` an empty object). Left enabled, as above.
// - internal/table.ts, disabled: the initial `jobs` and `extras` as `["Stryker was here"]` (a
//   row's job is written when a task takes the row, before any read; a side object is read only
//   when the row's flag is set, which `setExtra` sets with the entry). Left enabled (their lines
//   hold killed mutants of the same mutators), each a speed or memory choice only: `extra`'s
//   flag test `=== 0` as `false` (the array holds `undefined` wherever the flag is 0: `setExtra`
//   writes the entry, or the row is past the array's end), and `setExtra`'s `i < extras.length`
//   as `true` or `<=` and `v !== undefined` as `true` (the array gets holes or trailing
//   `undefined`s, read alike).
// - internal/queries.ts, `breakerOf`: `i < 0 ? undefined : …` as `false` (at row -1 the table
//   reads `extras[-1]`, which is `undefined`, as for no row). Left enabled, as above.
// internal/shift.ts and the shift methods of internal/limits.ts, breakers.ts and dedup.ts (a
// wall-clock step moves the windows that count elapsed time), measured 2026-12-02 against
// kernel-shift-windows, kernel-shift-manual, Kernel, kernel-internals, Driver, s02-time and
// s20-flow-control. Equivalent, disabled: the `-1` of the "no start bound" tests as `+1`
// (UnaryOperator): -1 moved by the step stays below every time it is compared with, since they
// all moved alike. Equivalent, left enabled (their line holds killed mutants of the mutator):
// - shift.ts: the row's `notBefore !== -1` forced true, and the kept run's `=== -1` forced false
//   (the same: "none" moves with the step, below every slot and clock reading); `i < rows.top`
//   as `<=` (the row past the last is never live); the wait's `until` forced undefined or moved
//   by `- delta` (a rate wait's end is read back from its scope's cell, which moved; a
//   concurrency wait has none); `delta === 0` forced false (a step of 0 moves nothing).
// - limits.ts `opensAt !== +Infinity` and breakers.ts `halfOpenAt !== +Infinity` forced true
//   (+Infinity plus a step is +Infinity).
// Open, not equivalent: the kept run's start bound forced to -1 or inverted (`!==`): a bound
// ahead of the clock (set by a stepping driver) is lost; no test sets one under a manual run.
// internal/rows.ts and internal/records.ts, their survivors (2026-12-02, issue 29):
// - rows.ts, disabled: the reused `context`'s initial object and its `pauseRequested: false` (as
//   `{}`, `true`): `load` writes all six fields before any guard or op reads one, and CANCEL, the
//   one edge stepped without `load`, has neither; the reused `args.event` (as `{}`, type `""`): no
//   edge stepped with `rows.args` reads its event (the guards that do, on SUCCEED and FAIL, get
//   theirs from the rules); `load`'s defaults for a row without a side object (the block emptied,
//   `pauseRequested` as `true`): such a row is a plain one-shot, stepped only through START,
//   CANCEL, EXPIRE and RETRY, whose guards and ops read `attempt` and `runNumber` alone (RESUME,
//   TRIGGER and MANUAL_END need a side object); `rowView`'s `missedRuns` and `resumeFrom` for a
//   row without a side object (as `""`, `+1`): both are read only with a plan, which lives in the
//   side object; `expire`'s id test with `||`: a final task evicted while not stale is its caller
//   id's row in `ids` (a new task with that id takes the row and marks the entry stale); `expire`'s
//   `setExtra(i, undefined)` removed: memory only, no query reads an evicted row and `accept`
//   writes the side object when the row is reused.
// - rows.ts, left enabled (their lines hold killed mutants of the same mutators):
//   `lookupGenerated`'s `k >= n` as `false` or `>` (an id of "#" alone reaches `k === 1`), the
//   first loop's `k <= n` (the NaN read past the end makes the index NaN, and `k >= n - 1`
//   refuses), the overflow guards `i > 0xffffffff` and `g > 0xffffffff` as `false` or `>=` (an
//   index past 2^32 - 1 is past `top`, a generation past it is no row's: both are refused later),
//   `k >= n - 1` as `false`, `>` or `n + 1` (no generation digits leave `g` 0, and no row has
//   generation 0), `i >= this.top` as `i > this.top` (row `top` was never used: its generation is
//   0; as `false` it is killed by an index of 2^29, whose table offsets wrap to row 0's); `expire`'s `id !== undefined` and `ids.get(id) === i` as `true`
//   (as the `||` above); `forEachMatch`'s `filter.state === undefined` as `false` (`indexOf` of
//   `undefined` is -1 as well).
// - records.ts, disabled: `Extras`'s initial `resumeFrom` (`-1` as `+1`): settle reads it only as
//   `>= 0`, and then the grid slot at or before 0 is never past the task's slot; `letGoOrder` and
//   `letGoIndex` (as `+1`): written with `letGoBy`, read only while `letGoBy` is set.
import { base } from "../testkit/stryker.base.mjs"

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  ...base,
  mutate: ["src/**/*.ts", "!src/index.ts"],
}
