/**
 * PostgreSQL for tests, shared by every project whose tests need it: a throwaway cluster per test
 * run (started by a Vitest global setup with the durable package's `scripts/pg-up.sh`, stopped
 * with `pg-down.sh`), and a fresh database per test on it. With `DATABASE_URL` set, that server
 * is used instead and left alone.
 *
 * @since 0.1.0
 */
import { execFileSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync } from "node:fs"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { inject } from "vitest"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** A PostgreSQL URL whose user may create databases. */
    databaseUrl: string
  }
}

/**
 * The durable package's cluster scripts, found from this module upward: it runs from its source
 * (`src/`) or its build (`dist/src/`), at different depths.
 */
const script = (name: string): string => {
  for (let dir = new URL(".", import.meta.url); dir.pathname !== "/"; dir = new URL("..", dir)) {
    const candidate = fileURLToPath(new URL(`packages/durable/scripts/${name}`, dir))
    if (existsSync(candidate)) return candidate
  }
  throw new Error(`packages/durable/scripts/${name} not found above ${import.meta.url}`)
}

/** A free TCP port on the loopback interface. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/**
 * The body of a Vitest global setup: starts a throwaway cluster on a free loopback port (fsync
 * off: tests check behaviour, not durability) and provides its URL as `inject("databaseUrl")`;
 * returns its teardown. `who` names the tests in the error when the server cannot start.
 */
export const globalSetup = async (
  project: TestProject,
  who: string,
): Promise<(() => void) | undefined> => {
  const given = process.env.DATABASE_URL
  if (given !== undefined && given !== "") {
    project.provide("databaseUrl", given)
    return undefined
  }
  const port = await freePort()
  let out: string
  try {
    out = execFileSync("bash", [script("pg-up.sh"), String(port)], {
      encoding: "utf8",
      env: { ...process.env, PG_OPTS: "-c fsync=off" },
      stdio: ["ignore", "pipe", "pipe"],
    })
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? ""
    throw new Error(
      `could not start a throwaway PostgreSQL for ${who} (set DATABASE_URL to use a running one):\n${stderr}`,
    )
  }
  const vars = Object.fromEntries(
    [...out.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1] as string, m[2] as string]),
  )
  const url = vars.DATABASE_URL
  const dir = vars.PGDIR
  if (url === undefined || dir === undefined) throw new Error(`pg-up.sh printed no URL: ${out}`)
  project.provide("databaseUrl", url)
  return () => {
    execFileSync("bash", [script("pg-down.sh"), dir], { stdio: "ignore" })
  }
}

/** Runs `f` on the run's server's maintenance database, one connection. */
const admin = <A>(f: (sql: PgClient.PgClient) => Effect.Effect<A, unknown>): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        PgClient.make({ url: Redacted.make(inject("databaseUrl")), maxConnections: 1 }),
        f,
      ),
    ).pipe(Effect.provide(Reactivity.layer)),
  )

/** Creates an empty database on the run's server; returns its URL and a function dropping it. */
export const freshDatabase = async (): Promise<{ url: string; drop: () => Promise<void> }> => {
  const name = `t_${randomUUID().replace(/-/g, "").slice(0, 16)}`
  await admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`))
  const base = new URL(inject("databaseUrl"))
  base.pathname = `/${name}`
  return {
    url: base.toString(),
    drop: () =>
      admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(
        () => undefined,
      ),
  }
}
