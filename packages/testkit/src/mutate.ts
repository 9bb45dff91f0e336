/**
 * `pnpm mutate [package [module…]]… [--own] [-- stryker options]`: StrykerJS over the packages
 * that have a `stryker.config.mjs` (core, runtime, durable), one after another, each from its own
 * folder so its config, incremental file and report stay inside it. With no package named, all of
 * them. Options after `--` go to `stryker run` unchanged (e.g. `--concurrency 2`).
 *
 * Naming modules after a package (`pnpm mutate core Schedule internal/cron`) narrows the run: it
 * mutates only `src/<module>.ts`, ignores static mutants (`--ignoreStatic`: in place, a mutant in
 * a module-level definition is not reloaded, so it would survive falsely), and runs only the test
 * files that import the module (see `mutateScope.ts`), or with `--own` only the module's own test
 * files. The initial run then measures those files instead of the whole suite, and each mutant
 * reruns fewer tests. The narrowed score is a lower bound: the other tests could only kill more.
 * Without modules, the package's whole configured scope and suite, for a final score.
 *
 * Not part of CI: a whole run takes hours on two cores. Each package's run is incremental
 * (`reports/mutation/incremental.json`, git-ignored), so a rerun tests only changed code and tests.
 *
 * @since 0.1.0
 */
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { testFilesFor } from "./mutateScope.ts"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const stryker = join(repoRoot, "node_modules/.bin/stryker")

const configured = readdirSync(join(repoRoot, "packages"), { withFileTypes: true })
  .filter(
    (d) => d.isDirectory() && existsSync(join(repoRoot, "packages", d.name, "stryker.config.mjs")),
  )
  .map((d) => d.name)

const args = process.argv.slice(2)
const split = args.indexOf("--")
const before = split === -1 ? args : args.slice(0, split)
const passThrough = split === -1 ? [] : args.slice(split + 1)
const own = before.includes("--own")

// Each package named, with the modules named after it (none: its whole scope).
const runs: Array<{ readonly name: string; readonly modules: Array<string> }> = []
for (const word of before.filter((w) => w !== "--own")) {
  const current = runs.at(-1)
  if (configured.includes(word)) runs.push({ name: word, modules: [] })
  else if (current !== undefined) current.modules.push(word.replace(/\.ts$/, ""))
  else {
    console.error(
      `mutate: no stryker.config.mjs for package ${JSON.stringify(word)}; ` +
        `configured: ${configured.join(", ")}`,
    )
    process.exit(2)
  }
}
if (runs.length === 0) runs.push(...configured.map((name) => ({ name, modules: [] })))

let failed = false
for (const { name, modules } of runs) {
  const cwd = join(repoRoot, "packages", name)
  const narrowed: Array<string> = []
  if (modules.length > 0) {
    const files = modules.map((m) => `src/${m}.ts`)
    const missing = files.filter((f) => !existsSync(join(cwd, f)))
    if (missing.length > 0) {
      console.error(`mutate: no module ${missing.join(", ")} in packages/${name}`)
      process.exit(2)
    }
    const tests = [
      ...new Set(files.flatMap((f) => testFilesFor(cwd, f, own ? "own" : "importers"))),
    ]
    if (tests.length === 0) {
      console.error(`mutate: no test file of packages/${name} imports ${files.join(", ")}`)
      process.exit(2)
    }
    narrowed.push("--mutate", files.join(","), "--ignoreStatic", "--testFiles", tests.join(","))
    console.log(`\n== mutate ${name}: ${files.join(", ")} against ${tests.join(", ")}`)
  } else {
    console.log(`\n== mutate ${name}`)
  }
  const run = spawnSync(stryker, ["run", ...narrowed, ...passThrough], { cwd, stdio: "inherit" })
  if (run.status !== 0) failed = true
}
process.exit(failed ? 1 : 0)
