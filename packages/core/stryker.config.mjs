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
import { base } from "../testkit/stryker.base.mjs"

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  ...base,
  mutate: ["src/**/*.ts", "!src/index.ts"],
}
