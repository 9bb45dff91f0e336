/** A PostgreSQL server for measurements: `DATABASE_URL`, or a throwaway one from scripts/pg-up.sh. */
import { execFileSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"

// The throwaway cluster scripts are the durable package's (its tests start servers the same way).
const script = (name: string) =>
  fileURLToPath(new URL(`../../../durable/scripts/${name}`, import.meta.url))

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** A server to measure on, with its default durability (fsync on). */
export interface Server {
  readonly url: string
  /** Where it came from, for the tables' notes. */
  readonly origin: string
  readonly stop: () => void
  /**
   * CPU time (ms, user + system) used so far by the server's backends alive now (a throwaway
   * cluster only, read from /proc; `undefined` for `DATABASE_URL` or off Linux).
   */
  readonly cpuMs: () => number | undefined
}

/** `DATABASE_URL` when set; otherwise starts a throwaway cluster (stopped by `stop`). */
export const start = async (): Promise<Server> => {
  const given = process.env.DATABASE_URL
  if (given !== undefined && given !== "")
    return { url: given, origin: "DATABASE_URL", stop: () => {}, cpuMs: () => undefined }
  const out = execFileSync("bash", [script("pg-up.sh"), String(await freePort())], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  })
  const vars = Object.fromEntries([...out.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]]))
  const url = vars.DATABASE_URL as string
  const dir = vars.PGDIR as string
  return {
    url,
    origin: "a throwaway local cluster (scripts/pg-up.sh, default durability)",
    stop: () => {
      execFileSync("bash", [script("pg-down.sh"), dir], { stdio: "ignore" })
    },
    cpuMs: () => childrenCpuMs(dir),
  }
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ: 100 on Linux). */
const USER_HZ = 100

/** CPU ms (user + system) of the live children of the cluster in `dir`'s postmaster. */
const childrenCpuMs = (dir: string): number | undefined => {
  try {
    const postmaster = readFileSync(`${dir}/data/postmaster.pid`, "utf8").split("\n")[0]
    let ticks = 0
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue
      let stat: string
      try {
        stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      } catch {
        continue
      }
      // Fields after the command (which may hold spaces): state ppid … utime(12) stime(13).
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (f[1] === postmaster) ticks += Number(f[11]) + Number(f[12])
    }
    return (ticks * 1000) / USER_HZ
  } catch {
    return undefined
  }
}

/** Runs `f` with a one-connection client on `url`. */
export const withClient = <A>(
  url: string,
  f: (sql: PgClient.PgClient) => Effect.Effect<A, unknown>,
): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(PgClient.make({ url: Redacted.make(url), maxConnections: 1 }), f),
    ).pipe(Effect.provide(Reactivity.layer)),
  )

/** A new empty database on the server; `drop` deletes it. */
export const freshDatabase = async (
  server: Server,
): Promise<{ url: string; drop: () => Promise<void> }> => {
  const name = `bench_${randomUUID().replace(/-/g, "").slice(0, 12)}`
  await withClient(server.url, (sql) => sql.unsafe(`CREATE DATABASE ${name}`))
  const url = new URL(server.url)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: () =>
      withClient(server.url, (sql) =>
        sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
      ).then(() => undefined),
  }
}
