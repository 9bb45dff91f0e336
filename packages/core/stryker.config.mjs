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
import { base } from "../testkit/stryker.base.mjs"

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  ...base,
  mutate: ["src/**/*.ts", "!src/index.ts"],
}
