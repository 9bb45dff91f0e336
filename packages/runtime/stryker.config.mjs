// StrykerJS for this package: `pnpm mutate runtime` from the repository root (see README, "Mutation
// testing"). Mutants are made in place, in this folder, so that the runner uses the workspace's
// vitest.workspace.ts (its projects and the @tickwork/source condition); a sandbox copy would be
// tested against the original sources. Results: reports/mutation/ (git-ignored).
// Equivalent mutants (no test can tell them apart) are listed here, each with its reason, and
// disabled at their line with a `// Stryker disable next-line <Mutator>: equivalent, <reason>`.
// Equivalent mutants: none named yet.
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "../../vitest.workspace.ts", related: false },
  inPlace: true,
  // Vitest does not type-check, so test files need no `// @ts-nocheck` (left untouched in place).
  disableTypeChecks: false,
  mutate: [
    // The timing actor, the worker pool, the ledger and the recorder: where the runtime keeps state.
    "src/internal/actor.ts",
    "src/WorkerPool.ts",
    "src/Ledger.ts",
    "src/Recorder.ts",
  ],
  // The docs and README tests read the sources' text, which instrumentation rewrites: left out.
  testFiles: ["test/**/!(docs|readme|testing-docs).test.ts"],
  coverageAnalysis: "perTest",
  incremental: true,
  incrementalFile: "reports/mutation/incremental.json",
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/index.html" },
  jsonReporter: { fileName: "reports/mutation/report.json" },
  // One worker: the machine's two cores are shared. `pnpm mutate runtime -- --concurrency 2` when idle.
  concurrency: 1,
  // Effect's fibers and the XState actor make a mutant's slow path legitimately slower than the
  // dry run on a busy machine; a timeout still counts as killed.
  timeoutMS: 10000,
  tempDirName: ".stryker-tmp",
}
