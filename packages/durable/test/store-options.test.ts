/**
 * The stores' own options are bounded (issue 28: bounds for every size-like option): a pool
 * size, a timeout or a lock wait out of range is an `InvalidOption` naming the field and the
 * value, before any connection is made or any file is touched.
 */
import { existsSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Options } from "@tickwork/core"
import { Effect, Layer } from "effect"
import { Postgres, Sqlite, SqliteClient } from "../src/index.ts"
import { tempDir } from "./helpers.ts"

/** A server that is not there: an option that passes its check fails to connect instead. */
const nowhere = "postgres://tickwork@127.0.0.1:1/none"

const build = <A, E>(layer: Layer.Layer<A, E>) =>
  Effect.flip(Layer.build(layer).pipe(Effect.scoped))

describe("Postgres.layer options", () => {
  it.effect.each([
    ["maxConnections", { maxConnections: 0 }, 0],
    ["maxConnections", { maxConnections: 2.5 }, 2.5],
    ["maxConnections", { maxConnections: Number.NaN }, Number.NaN],
    ["maxConnections", { maxConnections: Options.bounds.maxConnections.max + 1 }, 1_001],
    ["connectTimeout", { connectTimeout: 0 }, 0],
    ["connectTimeout", { connectTimeout: "Infinity" }, "Infinity"],
    ["connectTimeout", { connectTimeout: "soon" }, "soon"],
    ["statementTimeout", { statementTimeout: -1 }, -1],
    ["statementTimeout", { statementTimeout: 2 ** 31 }, 2 ** 31],
  ] as const)("%s %j is an InvalidOption naming it, before connecting", ([field, bad, value]) =>
    Effect.gen(function* () {
      // Untyped input, as from a config file: the check runs at run time.
      const e = yield* build(
        Postgres.layer({ url: nowhere, ...(bad as Postgres.PostgresStoreConfig) }),
      )
      expect(e).toMatchObject({ _tag: "InvalidOption", field, value })
      expect(e.message).toMatch(new RegExp(`^${field} .*, got `))
    }),
  )

  it.effect("maxConnections past the bound says the range and why", () =>
    Effect.gen(function* () {
      const e = yield* build(Postgres.layer({ url: nowhere, maxConnections: 1_000_000 }))
      expect(e.message).toBe(
        "maxConnections must be an integer from 1 to 1,000 (connections one process may open; PostgreSQL serves 100 for all processes together by default), got 1000000",
      )
    }),
  )

  it.effect("the largest values pass their check (and then fail to connect)", () =>
    Effect.gen(function* () {
      const e = yield* build(
        Postgres.layer({
          url: nowhere,
          maxConnections: Options.bounds.maxConnections.max,
          statementTimeout: Postgres.MAX_TIMEOUT_MS,
          connectTimeout: "2 seconds",
        }),
      )
      expect(e._tag).toBe("StoreUnavailable")
    }),
  )
})

describe("Sqlite.layer options", () => {
  it.effect.each([[-1], [1.5], [Number.NaN], [Number.POSITIVE_INFINITY], [2 ** 31]])(
    "lockTimeoutMs %s is an InvalidOption naming it, and no file is made",
    ([lockTimeoutMs]) =>
      Effect.gen(function* () {
        const t = tempDir()
        const file = t.file()
        const e = yield* build(Sqlite.layer({ filename: file, lockTimeoutMs }))
        expect(e).toMatchObject({ _tag: "InvalidOption", field: "lockTimeoutMs" })
        expect(Object.is((e as { value: unknown }).value, lockTimeoutMs)).toBe(true)
        expect(existsSync(file)).toBe(false)
        t.cleanup()
      }),
  )

  it.effect("lockTimeoutMs 0 and the largest are accepted", () =>
    Effect.gen(function* () {
      const t = tempDir()
      for (const lockTimeoutMs of [0, SqliteClient.MAX_LOCK_TIMEOUT_MS]) {
        yield* Layer.build(Sqlite.layer({ filename: t.file(), lockTimeoutMs })).pipe(Effect.scoped)
      }
      expect(existsSync(t.file())).toBe(true)
      t.cleanup()
    }),
  )
})
