/**
 * `pnpm mutate [package…] [-- stryker options]`: StrykerJS over the packages that have a
 * `stryker.config.mjs` (core, runtime, durable), one after another, each from its own folder so
 * its config, incremental file and report stay inside it. With no package named, all of them.
 * Options after `--` go to `stryker run` unchanged (e.g. `--mutate src/Heap.ts`, `--concurrency 2`).
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

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const stryker = join(repoRoot, "node_modules/.bin/stryker")

const configured = readdirSync(join(repoRoot, "packages"), { withFileTypes: true })
  .filter(
    (d) => d.isDirectory() && existsSync(join(repoRoot, "packages", d.name, "stryker.config.mjs")),
  )
  .map((d) => d.name)

const args = process.argv.slice(2)
const split = args.indexOf("--")
const named = split === -1 ? args : args.slice(0, split)
const passThrough = split === -1 ? [] : args.slice(split + 1)

const unknown = named.filter((name) => !configured.includes(name))
if (unknown.length > 0) {
  console.error(
    `mutate: no stryker.config.mjs for package ${unknown.map((n) => JSON.stringify(n)).join(", ")}; ` +
      `configured: ${configured.join(", ")}`,
  )
  process.exit(2)
}

let failed = false
for (const name of named.length > 0 ? named : configured) {
  console.log(`\n== mutate ${name}`)
  const run = spawnSync(stryker, ["run", ...passThrough], {
    cwd: join(repoRoot, "packages", name),
    stdio: "inherit",
  })
  if (run.status !== 0) failed = true
}
process.exit(failed ? 1 : 0)
