/**
 * Corruption is a fault, not an outage (issue 28, item 2): a SQLite file with a damaged page is
 * refused at open (`PRAGMA quick_check`), and a page found damaged while the scheduler runs
 * (`SQLITE_CORRUPT`) stops claiming and fails the program with `StoreCorrupt` (naming the file,
 * what SQLite said, and what to do), logged at Error, instead of being retried forever. Each
 * test damages a real file: garbage over one page in the middle of a store of 3,000 tasks.
 */
import { closeSync, openSync, statSync, writeSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import Database from "better-sqlite3"
import { Cause, Effect, Exit, Fiber, Layer, Logger, Schema } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql/SqlClient"
import { TestClock } from "effect/testing"
import {
  DurableScheduler,
  Errors,
  Handler,
  Sqlite,
  SqliteClient,
  StoreAdmin,
  TaskStore,
} from "../src/index.ts"
import { sqlite, tempDir, withScheduler } from "./helpers.ts"

const TASKS = 3_000
const DUE = 60_000

/** A handler recording the ids it ran; its payload is padded so the tasks fill many pages. */
const counting = () => {
  const ran: Array<string> = []
  const handler = Handler.make("pad", Schema.Struct({ pad: Schema.String }), (_, run) =>
    Effect.sync(() => {
      ran.push(run.id)
    }),
  )
  return { ran, handler }
}

/** Stores `TASKS` tasks due at `DUE` in `file` (then closed: its WAL checkpointed). */
const fill = (file: string, handler: ReturnType<typeof counting>["handler"]) =>
  withScheduler(sqlite(file), { handlers: [handler], claim: false }, (d) =>
    Effect.forEach(
      Array.from({ length: TASKS / 500 }, (_, chunk) => chunk),
      (chunk) =>
        d.scheduleAll(
          Array.from({ length: 500 }, (_, k) => ({
            id: `t${String(chunk * 500 + k).padStart(5, "0")}`,
            handler,
            payload: { pad: "x".repeat(200) },
            schedule: Schedule.once(DUE),
          })),
        ),
      { discard: true },
    ),
  )

/** Writes garbage over the page in the middle of `file`; returns its number (1-based). */
const damage = (file: string): number => {
  const db = new Database(file, { readonly: true })
  const pageSize = db.pragma("page_size", { simple: true }) as number
  db.close()
  const pages = statSync(file).size / pageSize
  const page = Math.floor(pages / 2)
  const fd = openSync(file, "r+")
  writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (page - 1) * pageSize)
  closeSync(fd)
  return page
}

/** A logger keeping each Error line's text. */
const capture = () => {
  const errors: Array<string> = []
  const logger = Logger.make((o) => {
    if (o.logLevel !== "Error") return
    const parts = Array.isArray(o.message) ? o.message : [o.message]
    errors.push(parts.map((p) => String(p)).join(" "))
  })
  return { errors, layer: Logger.layer([logger]) }
}

describe("a damaged SQLite page", () => {
  it.effect("is refused at open: StoreCorrupt naming the file, SQLite's words and what to do", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const file = t.file()
      const { handler } = counting()
      yield* fill(file, handler)
      damage(file)
      const exit = yield* Effect.exit(
        Layer.build(Sqlite.layer({ filename: file })).pipe(Effect.scoped),
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      expect(error).toBeInstanceOf(Errors.StoreCorrupt)
      const corrupt = error as Errors.StoreCorrupt
      expect(corrupt.filename).toBe(file)
      expect(corrupt.detail).toContain("quick_check")
      expect(corrupt.message).toContain(".recover")
      expect(corrupt.message).toContain("backup")
      // The operator's tools say the same, as an open error of reason `corrupt`.
      const admin = yield* Effect.exit(StoreAdmin.open(file).pipe(Effect.scoped))
      expect(Exit.isFailure(admin) && Cause.squash(admin.cause)).toMatchObject({
        _tag: "StoreUnavailable",
        reason: "corrupt",
      })
      t.cleanup()
    }),
  )

  it.effect(
    "found while running: claiming stops, an Error log says what to do, and the program fails with StoreCorrupt",
    () => {
      const log = capture()
      return Effect.gen(function* () {
        const t = tempDir()
        const file = t.file()
        const { ran, handler } = counting()
        yield* fill(file, handler)
        // Opened while the file is sound (the check at open passes), damaged under it, and its
        // page cache emptied so the next read of that page comes from the file.
        const program = Effect.gen(function* () {
          const { client, db } = yield* SqliteClient.make({ filename: file }).pipe(
            Effect.provide(Reactivity.layer),
          )
          const store = yield* TaskStore.make({
            exclusive: true,
            integrity: {
              filename: file,
              check: Effect.sync(() => SqliteClient.quickCheck(db)),
            },
          }).pipe(Effect.provideService(SqlClient, client))
          damage(file)
          db.pragma("shrink_memory")
          yield* DurableScheduler.make({ handlers: [handler], workers: 8 }).pipe(
            Effect.provideService(TaskStore.TaskStore, store),
          )
          return yield* Effect.never
        }).pipe(Effect.scoped)
        const fiber = yield* Effect.forkChild(program, { startImmediately: true })
        yield* TestClock.adjust(DUE)
        // Retrying would go on for ever: the program must end by itself.
        for (let k = 0; k < 100 && fiber.pollUnsafe() === undefined; k++) {
          yield* TestClock.adjust(1_000)
        }
        const exit = yield* Fiber.await(fiber)
        expect(Exit.isFailure(exit)).toBe(true)
        const corrupt = Exit.isFailure(exit)
          ? exit.cause.reasons.find((r) => r._tag === "Die")
          : undefined
        expect(corrupt?._tag === "Die" && corrupt.defect).toBeInstanceOf(Errors.StoreCorrupt)
        expect(ran.length).toBeLessThan(TASKS)
        const line = log.errors.find((e) => e.includes("StoreCorrupt"))
        expect(line).toContain(file)
        expect(line).toContain(".recover")
        expect(line).toMatch(/SQLITE_CORRUPT|malformed/)
        t.cleanup()
      }).pipe(Effect.provide(log.layer))
    },
    60_000,
  )
})
