/**
 * `pnpm chaos`: the full chaos run (chaos.ts) — 20k one-shots plus recurring tasks, 4 workers,
 * a SIGKILL every 3 s, one SIGSTOP past the lease, one `pg_ctl restart -m fast`,
 * `pg_terminate_backend` every 2 s — and its figures. Exits 1 if anything was lost or ran twice
 * without a fault to explain it. `--short` runs the CI size.
 */
import { chaos, describeReport } from "./chaos.ts"
import { CI, FULL } from "./sizes.ts"

const options = process.argv.includes("--short") ? CI : FULL
const report = await chaos({ ...options, log: (line) => console.error(line) })
for (const line of describeReport(report, true)) console.log(line)
process.exit(
  report.lost.length === 0 && report.beyondInFlight.length === 0 && report.notRestarted === 0
    ? 0
    : 1,
)
