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
