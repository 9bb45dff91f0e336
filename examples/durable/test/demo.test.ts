/**
 * The durable demo end to end, as `pnpm --filter @tickwork/example-durable start` runs it: a
 * worker killed mid-report, a second worker on the same file that recovers the cut-off run and
 * applies each missed-run policy. Real processes and the real clock, so the bounds are generous;
 * the assertions are on what the workers print, not on timings.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { expect, it } from "vitest"

const run = promisify(execFile)
const exampleDir = fileURLToPath(new URL("../", import.meta.url))
const tsx = fileURLToPath(import.meta.resolve("tsx"))

it("a worker killed mid-report: the next one runs the report again and applies each policy", async () => {
  const { stdout } = await run(
    process.execPath,
    ["--import", tsx, "--conditions=@tickwork/source", "src/main.ts"],
    { cwd: exampleDir, timeout: 120_000 },
  )
  expect(stdout).toMatch(/killed worker \d+ with SIGKILL/)
  // 5 tasks, or 4 when the one-shot reminder (due at +3.5 s) ran before a slow start's kill.
  expect(stdout).toMatch(/reopened the store: [45] tasks scheduled, [1-9]\d* run\(s\) cut off/)
  // The report cut off by the kill runs again as delivery 2, under the same key.
  expect(stdout).toMatch(/report +slot \+[\d.]+s started \(12 pages, delivery 2\)/)
  // Two seconds down: the coalescing and skipping tasks record what they did with those slots.
  expect(stdout).toMatch(/coalesced digest: \d+ slot\(s\)/)
  expect(stdout).toMatch(/skipped gauge: \d+ slot\(s\)/)
  expect(stdout).toMatch(/reminder 1 runs/)
  expect(stdout).toMatch(/done \(the second worker exited 0\)/)
}, 180_000)
