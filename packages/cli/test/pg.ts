/** PostgreSQL for tests: a fresh database per test on the run's throwaway server. */
import { randomUUID } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { inject } from "vitest"

const admin = <A>(f: (sql: PgClient.PgClient) => Effect.Effect<A, unknown>): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        PgClient.make({ url: Redacted.make(inject("databaseUrl")), maxConnections: 1 }),
        f,
      ),
    ).pipe(Effect.provide(Reactivity.layer)),
  )

/** Creates an empty database and returns its URL and a function dropping it. */
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
