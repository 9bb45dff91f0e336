// StrykerJS for this package: `pnpm mutate durable` from the repository root (see README, "Mutation
// testing"). Mutants are made in place, in this folder, so that the runner uses the workspace's
// vitest.workspace.ts (its projects and the @tickwork/source condition); a sandbox copy would be
// tested against the original sources. Results: reports/mutation/ (git-ignored).
// Equivalent mutants (no test can tell them apart) are listed here, each with its reason, and
// disabled at their line with a `// Stryker disable next-line <Mutator>: equivalent, <reason>`.
// Equivalent mutants, left enabled (their line holds killed mutants of the same mutator):
// - src/internal/options.ts, resolve(): `health === null` and `given === null` (the breakers)
//   forced false: both are read through `?? {}`, so null never reaches the test.
// - src/internal/held.ts, `drained`'s finalizer emptied or its `drainedWaiter === resume` test
//   forced false: a waiter left behind is an interrupted fiber's callback, and resuming it
//   does nothing; a later waiter replaces it anyway.
// Settle, completion, breakers, controls, accept, leases (and rows.resume with a manual run):
// Equivalent mutants disabled at their line (no killed mutant of the same mutator there):
// - src/internal/completion.ts, `?? "final"` (twice): a settled run always has a continuation.
// - src/internal/controls.ts, decideUpdate's breaker move `"remove"` emptied: Rules.updateStep
//   reads only "keep" and "change", so any other word moves the task as "remove" does; the
//   `Events.updated` slot's `m.update.slot ?? row.slot` as `&&`: an update always has its slot.
// - src/internal/leases.ts, `{ discard: true }`: the interruptions' results are not read;
//   `noneGoing`, the settle turns' bound, `wakeup.reset()` and whileHeld's empty-table return:
//   they only decide whether a timer is set (that the last run's release cancels) or one more
//   look is made; each look finds the same.
// - src/internal/settle.ts, `settled.nextSlot ?? settled.slot` as `&&`: a consumed slot whose
//   schedule goes on has nextSlot === slot, and with no next slot the task is final.
// - src/internal/breakers.ts, define's `{ discard: true }`: its result is not read; memberOf's
//   `held` with `||`: Breaker.step reads `resumeAt` only for held members; step's `members`
//   starting with a string: a member with no id or state is never held, unheld or the probe;
//   `options.detail?.(plan) ?? ""` and afterSlot's `plan.transition?.to`: only the slot and
//   cool-down steps move a breaker's state, and both pass a detail, asked for only then.
// Equivalent mutants, left enabled (their line holds killed mutants of the same mutator):
// - src/internal/accept.ts, prepare: `typeof name === "string"` forced true: the handlers map
//   is keyed by names, so no other value finds a handler.
// - src/internal/controls.ts, decideUpdate: `valid.resolved !== undefined` and
//   `changes.schedule !== undefined` (each forced true, or joined by `||`; three lines):
//   Rules.validateChanges resolves a schedule exactly when one is given. `changes.breaker !==
//   null` forced true (`own`): a null breaker is "remove", which reads no `own`; `breakerChange
//   !== null` forced true (`own:`): an own policy always gives a breaker. `kept === undefined`
//   forced false: a schedule with no stored form was refused by Schedule.encode just before.
// - src/internal/leases.ts, dropLapsed's `held.size === 0` and `lapsed.length === 0` forced
//   false: the loops over nothing do nothing; whileHeld's `held.size > 0` as true or `>= 0`:
//   the look after it finds nothing held and does nothing; `turn < SETTLE_TURNS &&
//   noneGoing(env)` forced false, noneGoing's `h.started && !h.finished` forced true and
//   whileHeld's `held.size === 0` forced false: they only save a timer.
// - src/internal/rows.ts, resume: `r.resumeFrom >= 0` as `> 0`: a resume point is a resume's
//   `now`, and at epoch 0 no slot can have passed.
// - src/internal/settle.ts, keptOf: `outcome.kind === "succeeded"` forced true: only a success
//   carries a value; decide: `settled.scheduleError === undefined` forced true: a schedule that
//   fails ends the task, whose stored schedule is not read again; manualEnd: `ended.state ===
//   "paused"` forced true: a manual run ends paused exactly when a pause was asked for, so the
//   row's pausedReason is null otherwise.
// - src/internal/breakers.ts, memberOf: `held` (or either half) forced true: as above;
//   `pausedReason` (state paused) and `pauseRequest` (state running) forced true: Breaker.step
//   reads a member's pausedReason only when it is paused and its pauseRequest only when it runs;
//   holdTask's `row.state === "running"` forced true: the plan holds only scheduled and running
//   tasks, and the UPDATE is guarded by `state = 'running'`; step: `Breaker.readsMembers(...)`
//   forced true: the step gives the same plan with the members it does not need;
//   `plan.probe === undefined` forced false: the lookups that follow give no row for no probe;
//   the transition's `t.to === "open"` forced true: a transition to half-open or closed has no
//   halfOpenAt, and undefined is stored as NULL; `row !== undefined` forced true (hold, unhold):
//   every planned task is a member read from its row; nextHalfOpen: `rows[0] === undefined` and
//   `rows[0].at === undefined` forced false: MIN() gives one row, its NULL read as null.
import { base } from "../testkit/stryker.base.mjs"

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  ...base,
  mutate: [
    // The modules that decide (or carry the core's decisions onto rows) without being SQL text.
    "src/internal/accept.ts",
    "src/internal/breakers.ts",
    "src/internal/completion.ts",
    "src/internal/controls.ts",
    "src/internal/held.ts",
    "src/internal/leases.ts",
    "src/internal/ledger.ts",
    "src/internal/options.ts",
    "src/internal/rows.ts",
    "src/internal/settle.ts",
  ],
}
