/**
 * A private throwaway PostgreSQL cluster for tests that restart or stop the server: the run's
 * shared server (test/setup/global.ts) serves every other test file at once, so it must stay up.
 * Started with scripts/pg-up.sh on a free port, restarted with `pg_ctl restart -m fast`, removed
 * with scripts/pg-down.sh.
 */
import { execFileSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { freePort } from "@tickwork/testkit/Postgres"

const script = (name: string) => fileURLToPath(new URL(`../scripts/${name}`, import.meta.url))

/** A TCP port free on 127.0.0.1 right now. */
export { freePort }

const pgBin = (): string => {
  const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(a) - Number(b))
  return `/usr/lib/postgresql/${versions[versions.length - 1]}/bin`
}

/** Runs `pg_ctl` on the cluster, as the `postgres` user when we are root. */
const pgCtl = (dir: string, args: ReadonlyArray<string>): void => {
  const command = [`${pgBin()}/pg_ctl`, "-D", `${dir}/data`, ...args]
  const root = process.getuid?.() === 0
  execFileSync(
    root ? "runuser" : (command[0] as string),
    root ? ["-u", "postgres", "--", ...command] : command.slice(1),
    {
      stdio: "ignore",
    },
  )
}

/** A running private cluster. */
export interface Cluster {
  /** The URL of its `tickwork` database. */
  readonly url: string
  /** `pg_ctl restart -m fast`: every session is terminated, the server is back when it returns. */
  readonly restart: () => void
  /** Stops the server and deletes its files. */
  readonly remove: () => void
}

/** Starts a private cluster (about half a second). */
export const startCluster = async (): Promise<Cluster> => {
  const port = await freePort()
  const out = execFileSync("bash", [script("pg-up.sh"), String(port)], {
    encoding: "utf8",
    env: { ...process.env, PG_OPTS: "-c fsync=off" },
    stdio: ["ignore", "pipe", "pipe"],
  })
  const vars = Object.fromEntries(
    [...out.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1] as string, m[2] as string]),
  )
  const url = vars.DATABASE_URL as string
  const dir = vars.PGDIR as string
  return {
    url,
    restart: () =>
      pgCtl(dir, ["-l", `${dir}/server.log`, "-m", "fast", "-w", "-t", "60", "restart"]),
    remove: () => {
      execFileSync("bash", [script("pg-down.sh"), dir], { stdio: "ignore" })
    },
  }
}
