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
