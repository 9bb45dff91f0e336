// The StrykerJS settings every package's stryker.config.mjs shares; each adds its `mutate` list
// (and its equivalent mutants). Mutants are made in place, in the package's folder, so that the
// runner uses the workspace's vitest.workspace.ts (its projects and the @tickwork/source
// condition); a sandbox copy would be tested against the original sources.
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export const base = {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "../../vitest.workspace.ts", related: false },
  inPlace: true,
  // Vitest does not type-check, so test files need no `// @ts-nocheck` (left untouched in place).
  disableTypeChecks: false,
  // The docs and README tests read the sources' text, which instrumentation rewrites: left out.
  testFiles: ["test/**/!(docs|readme|testing-docs).test.ts"],
  coverageAnalysis: "perTest",
  incremental: true,
  incrementalFile: "reports/mutation/incremental.json",
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/index.html" },
  jsonReporter: { fileName: "reports/mutation/report.json" },
  // One worker: the machine's two cores are shared. `pnpm mutate <package> -- --concurrency 2`
  // when idle.
  concurrency: 1,
  // Effect's fibers and the XState actor make a mutant's slow path legitimately slower than the
  // dry run on a busy machine; a timeout still counts as killed.
  timeoutMS: 10000,
  tempDirName: ".stryker-tmp",
}
