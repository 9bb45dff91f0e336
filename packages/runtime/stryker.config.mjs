// StrykerJS for this package: `pnpm mutate runtime` from the repository root (see README, "Mutation
// testing"). Mutants are made in place, in this folder, so that the runner uses the workspace's
// vitest.workspace.ts (its projects and the @tickwork/source condition); a sandbox copy would be
// tested against the original sources. Results: reports/mutation/ (git-ignored).
// Equivalent mutants (no test can tell them apart) are listed here, each with its reason, and
// disabled at their line with a `// Stryker disable next-line <Mutator>: equivalent, <reason>`.
// Equivalent mutants:
// - src/Recorder.ts, accepted(): `this.listener?.accepted` as `this.listener.accepted`
//   (OptionalChaining) and `f !== undefined` forced true (ConditionalExpression). The timing actor
//   calls accepted() only when `hearsAccepted`, the same test, so the listener and `f` are defined.
// - src/Recorder.ts, the three `if (this.subscribers > 0) PubSub.publishUnsafe(…)` guards forced
//   true or as `>= 0` (ConditionalExpression, EqualityOperator). The scheduler's PubSub is sliding
//   with no replay: a record published while no stream reads it is not kept, so publishing it or
//   not is the same but for the cost. (Stryker disables by mutator, so the same lines' `false` and
//   `<= 0` mutants, which the occurrence-stream tests kill, are disabled with them.)
// - src/Recorder.ts, occurred(): `o.kind === "breaker"` compared with "" (StringLiteral, disabled).
//   A breaker transition then goes down the task branch: it has no `id`, so `rowOf` gives -1 and
//   the ledger keeps nothing for row -1; it is published as before and counts no metric.
// - src/Ledger.ts and src/internal/ledgerColumns.ts, disabled: in addRun, the `record.kind !==
//   "ran"` test (a `retried` record has a failed outcome, copied anyway, and columns rebuild the
//   kind from the continuation); the `-1` written to an emptied row's OLDEST and NEWEST as `+1`,
//   in dropHistory and in dropOldest (read only while the row holds records); `moved.fill(-1)` as
//   `+1` or removed (only held positions' entries are read, each written first); the reuse of a
//   spare ring forced or inverted (a spare is taken only at its own size; memory only); the
//   `fill(0)` of a grown row array (zeros already); the first ring's size `Math.max(1, …)` as
//   `Math.min` (a ring of one position grows); append's grow size (`/ ROW` as `* ROW`, `* 2` as
//   `/ 2`: reserveRows doubles the table itself) and reserveRows' `have * 2` as `have / 2` (the
//   table still grows to at least what is asked); `r + GEN` as `r - GEN` where a row's first
//   record writes its generation (GEN is 0); append's `earlierRecords > 0 && …` guard as `||`
//   (trimEarlier checks the same bound itself), and addRun's first `!this.enabled || row < 0` as
//   `&&` (the same record is rebuilt, and the same test follows); reserveRows' `rows <= have ||
//   !enabled` as `&&` (a larger table only; a disabled ledger appends nothing);
//   `old.objects.fill` removed (frees memory only); the objects column's `new Array(size)` as
//   `new Array()` (each position is written before it is read).
// Equivalent, but left enabled (their line holds killed mutants of the same mutator):
// - src/Recorder.ts, occurred(): `o.kind === "breaker"` forced false (see above).
// - src/Ledger.ts: in missed(), `nextSlot !== undefined` forced true (`undefined <= n` is false);
//   in addRun, `outcome !== Task.succeeded` forced true and the first `!this.enabled || row < 0`
//   forced false (whole or `row < 0`: the same record is rebuilt, and the same test follows),
//   `named ||` forced true (a copy reads back as the columns do); in get(), the
//   `row < 0`, `r >= c.length` and `COUNT === 0` tests forced false, `>` or `&&` (generations
//   start at 1, so an unused row's GEN 0 never matches, and an emptied row's OLDEST is -1: the
//   result is [] either way), and `r + GEN` as `r - GEN` there and in append's and retire's tests
//   (GEN is 0); append's `earlierRecords > 0 && …` guard forced true or `>=` (trimEarlier checks
//   the same bound itself); makeRoom's grow test forced true or `>=` (a larger ring instead of a
//   compaction, memory only); rebuild's reuse of a spare forced false (fresh arrays: memory
//   only); the `moved` array reallocated each time; rebuild's `after < 0` forced true or `<= 0`
//   (a task's newest record is moved after its others, so the last write is right); rebuild's
//   link loop run to `k <= used` (rebuild runs on a full ring, so the extra turn visits the head
//   again and writes the same links) and its `dropped === 1` skip forced false (a dropped
//   record's links are dead writes to position -1 or to a row's ends, which the row's held
//   records, later in the ring, write again);
//   reserveRows' `rows <= have || !enabled` forced false or `<` (a larger table only);
//   growFinal's test as `>=` or `finalTail + finalHead` (it grows sooner) and its copy
//   `t <= finalTail` (one unused position more); dropOldest's `after < 0` forced false (a dead
//   write, as above); retire's `COUNT !== 0` forced true (dropping an empty row's history
//   changes nothing).
// WorkerPool, internal/actor and Recorder, measured 2026-12-02. Equivalent, disabled:
// - src/WorkerPool.ts, constructor: `new Array(options.workers)` as `new Array()` for the tokens
//   and fibers (ArrayDeclaration). A slot's entry is written before it is read, and an unwritten
//   index of a grown array reads `undefined` as a filled one does.
// - src/WorkerPool.ts, annotatedContext(): the cache's WeakMap `set` removed (CallExpression).
//   Each miss builds an equal annotations object again: time and memory only.
// - src/WorkerPool.ts, interrupt(): `others.length + (self ? 1 : 0)` as `-` (ArithmeticOperator).
//   The count is returned only when `self` is false, where the term is 0.
// - src/Recorder.ts, acceptedOn(): the grown size's `row + 1` as `row - 1` and `length * 2` as
//   `length / 2` (ArithmeticOperator). A new row is at most one past the last, so each size
//   still holds it; only how often the array grows changes.
// - src/Recorder.ts, stream(): the release's `this.subscribers--` removed or as `++`
//   (BlockStatement, UpdateOperator): records are then published with no reader, and the sliding
//   PubSub keeps none for a later one (as with the publish guards above).
// Equivalent, left enabled (their line holds killed mutants of the same mutator):
// - src/WorkerPool.ts, annotatedContext(): `context === this.lastContext` forced false and
//   `annotated === undefined` forced true (the cache missed: an equal object is built again).
// - src/WorkerPool.ts, interrupt(): the loop's `k < this.tokens.length` as `<=` (one more read of
//   an unused index: undefined, skipped); `others.length === 0` forced false (interrupting no
//   fibers is a no-op).
// - src/Recorder.ts: `hearsAccepted` forced true (accepted() looks for the callback itself);
//   started()'s `run.scheduledFor >= this.latestAccepted` forced false or `>` (the acceptance
//   time is then read, and a run due at or after it counts from its due time all the same);
//   finished()'s copy test forced true or `>= 0` (a copy nobody keeps: cost only);
//   acceptedOn()'s `at > this.latestAccepted` as `>=` (the same value is written); occurred()'s
//   `o.kind === "deduplicated"` forced true (a control occurrence has no `result`: the count kept
//   under `undefined` becomes NaN, and no series is registered or moved).
// Recorder (the rest of its survivors) and WorkerPool's last one, measured 2026-12-02.
// Equivalent, left enabled (its line holds the killed forced-false mutant of the same mutator):
// - src/Recorder.ts, acceptedOn(): `at > this.latestAccepted` forced true. Acceptance times are
//   the scheduler's time, which never goes back in its own frame (a wall-clock step moves the
//   times kept with it, `shift`), so each acceptance is the latest and is written either way.
// internal/actor.ts, named after the partial run at 8d11657 (not disabled: each line holds killed
// mutants of the same mutator):
// - `anchorOffset`'s `precise >= wall` as `>`: at `precise === wall` both branches give
//   `wall - mono`.
// - `update`'s `info !== undefined` as `true`: after `update` returned true the task is live,
//   so `kernel.info(id)` is defined.
// - `drain`'s `pendingOccurrenceCount === 0` early return as `false`: draining no occurrences
//   records nothing (a cost only).
// - `refreshGauges`' `gaugesQueued` test as `false` and its `= true` as `false`: the gauges are
//   refreshed on every call instead of once per burst, to the same values (a cost only).
// - the wake-up's `wakeBefore !== -Infinity` test as `true`: waking "if before" -Infinity never
//   wakes; it adds a `nextSlot()` read.
// - `reserveRows` removed: the ledger grows its row table itself when a row is past it; this
//   only sizes it ahead.
// internal/actor.ts, the whole measurement, 2026-12-02. Equivalent, disabled:
// - the three ended-run buffers' initial `[]` as `["Stryker was here"]` (ArrayDeclaration):
//   `onEnd` writes index k before `applyEnded` reads it, and only indices below `ended` are read.
//   (Reported as timeouts at the start of the run on the loaded machine, with `"effect"` as `""`
//   below; applied by hand, all four pass the actor's, the Scheduler's and shutdown's tests in 4 s.)
// - the wake-up's timer kind, `"node"` or `"effect"` as `""` (StringLiteral): Wakeup makes a Node
//   timer only for `"node"`, so `""` is Effect's timer, as `"effect"` is; on the live clock that
//   sleeps to the same times on Effect's live Clock (a race of two fibers per wait: cost only).
// Equivalent, left enabled (their line holds killed mutants of the same mutators):
// - `slotRuns`' `o.kind !== "retried"` forced true and `"retried"` as `""` (a `retried` entry
//   skipped): a slot whose highest attempt is a `retried` entry has that retry pending (or
//   running, or set aside for a waiting manual run), and core refuses a retry of the slot on
//   that (SPEC §19.7) before it reads the slot's runs.
// - `anchorOffset`'s `precise !== undefined` forced true: `undefined >= wall` is false, so the
//   wall reading is taken, as with no precise clock.
// - `nudge`'s `this.wakeup.wakeBefore !== -Infinity` forced true (as the health wake-up's above),
//   and both `next !== undefined` forced true: `wakeIfBefore(undefined)` never wakes
//   (`undefined < x` is false).
import { base } from "../testkit/stryker.base.mjs"

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  ...base,
  mutate: [
    // The timing actor, the worker pool, the ledger and the recorder: where the runtime keeps state.
    "src/internal/actor.ts",
    "src/WorkerPool.ts",
    "src/Ledger.ts",
    "src/Recorder.ts",
  ],
}
