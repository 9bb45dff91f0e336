/**
 * `pnpm chaos`: the full chaos run (chaos.ts) — 20k one-shots plus recurring tasks, 4 workers,
 * a SIGKILL every 3 s, one SIGSTOP past the lease, one `pg_ctl restart -m fast`,
 * `pg_terminate_backend` every 2 s — and its figures. `--sqlite` runs the SQLite variant
 * (sqlite-chaos.ts): one worker killed at random times and restarted on the same file, and the
 * disk under its store filled now and then. Exits 1 if anything was lost or ran twice without a
 * fault to explain it, or a full disk never reached the store. `--short` runs the CI size.
 */
import { chaos, describeReport } from "./chaos.ts"
import { CI, FULL, SQLITE_CI, SQLITE_FULL } from "./sizes.ts"
import { sqliteChaos } from "./sqlite-chaos.ts"

const short = process.argv.includes("--short")
const log = (line: string) => console.error(line)
const report = process.argv.includes("--sqlite")
  ? await sqliteChaos({ ...(short ? SQLITE_CI : SQLITE_FULL), log })
  : await chaos({ ...(short ? CI : FULL), log })
for (const line of describeReport(report, true)) console.log(line)
process.exit(
  report.lost.length === 0 &&
    report.beyondInFlight.length === 0 &&
    report.notRestarted === 0 &&
    report.faults.every((f) => f.kind !== "disk-full" || f.reached === true)
    ? 0
    : 1,
)
