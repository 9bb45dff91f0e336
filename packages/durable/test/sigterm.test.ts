/**
 * SIGTERM to a worker run under `NodeRuntime.runMain` (as the README's recipes run): it hands
 * its claims back before it exits — runs in flight and runs claimed but not yet started — and
 * another process takes them at once, not after their lease. The lease here (3 minutes) is far
 * longer than any deadline of the test, so lease expiry cannot explain a takeover.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, type Layer, Schema } from "effect"
import { type DurableScheduler, Handler, Postgres, type TaskStore } from "../src/index.ts"
import { child } from "./children.ts"
import { sqlite, tempDir, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

const LEASE_MS = 180_000
/** Every wait of the test: generous for a busy machine, and far below the lease. */
const DEADLINE_MS = 60_000
const TASKS = 6
/**
 * In-memory tasks given to each worker's runtime scheduler. Durable runs have a pool of their
 * own, so these take none of its workers: every claim A holds is running when it gets SIGTERM.
 */
const BUSY = 2

/** The workers' output, in order, for a failure's message. */
let output: Array<string> = []

const until = async (what: string, check: () => boolean, ms = DEADLINE_MS) => {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) {
      throw new Error(`timed out waiting for ${what}; the workers printed:\n${output.join("\n")}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

beforeEach(() => {
  output = []
})

/** The exit code of a worker told to stop, within the deadline. */
const exitCode = async (w: { readonly owner: string; readonly exited: Promise<number | null> }) => {
  let code: number | null | undefined
  void w.exited.then((c) => {
    code = c
  })
  await until(`${w.owner} to exit`, () => code !== undefined)
  return code
}

const worker = (store: string, owner: string, policy: string, shutdownMs: number) => {
  const lines: Array<string> = []
  const c = child(
    "term-worker.ts",
    [store, owner, String(LEASE_MS), policy, String(shutdownMs), String(BUSY)],
    (line) => {
      lines.push(line)
      output.push(`${owner}: ${line}`)
    },
  )
  return { ...c, lines, owner }
}

const hang = Handler.make("hang", Schema.Struct({ ms: Schema.Number }), () => Effect.void)
const ids = Array.from({ length: TASKS }, (_, k) => `t${k}`)

/** Stores the tasks (from a process that only schedules). */
const seed = (store: Layer.Layer<TaskStore.TaskStore, unknown>) =>
  withScheduler(store, { handlers: [hang], claim: false }, (api) =>
    api.scheduleAll(
      ids.map((id) => ({
        id,
        handler: hang,
        // Far longer than the test: only a release lets another process run it.
        payload: { ms: 3_600_000 },
        schedule: Schedule.once(0),
      })),
    ),
  )

const ledgers = (store: Layer.Layer<TaskStore.TaskStore, unknown>) =>
  withScheduler(store, { handlers: [hang], claim: false }, (api) =>
    Effect.forEach(ids, (id) =>
      Effect.map(Effect.all([api.ledger(id), api.status(id)]), ([ledger, status]) => ({
        id,
        ledger,
        status,
      })),
    ),
  )

const started = (lines: ReadonlyArray<string>) => lines.filter((l) => l.startsWith("start "))
const ended = (lines: ReadonlyArray<string>) => lines.filter((l) => l.startsWith("end "))

/** A's claims went back to the store, from A, each under its fence; B ran every task once. */
const checkLedgers = (
  found: ReadonlyArray<{
    id: string
    ledger: ReadonlyArray<DurableScheduler.DurableOccurrence>
    status: string
  }>,
  a: ReadonlyArray<string>,
  b: ReadonlyArray<string>,
  sigtermAt: number,
) => {
  // A started some and never ended any; B started each task once and ended it.
  expect(ended(a)).toEqual([])
  expect(
    started(b)
      .map((l) => l.split(" ")[1])
      .sort(),
  ).toEqual(ids)
  expect(ended(b)).toHaveLength(TASKS)
  const causes: Array<string | null> = []
  for (const { id, ledger, status } of found) {
    // A run A had started is B's second delivery; a claim A never started was no delivery.
    const delivery = started(a).some((l) => l.startsWith(`start ${id} `)) ? 2 : 1
    expect(started(b), id).toContain(`start ${id} ${delivery} B`)
    expect(status, id).toBe("done")
    const released = ledger.filter((o) => o.kind === "released")
    expect(released, id).toHaveLength(1)
    const r = released[0] as Exclude<DurableScheduler.DurableOccurrence, { kind: "ran" }>
    expect(r.owner, id).toBe("A")
    expect(r.fence, id).not.toBeNull()
    causes.push(r.cause)
    const ran = ledger.filter((o) => o.kind === "ran")
    expect(ran, id).toHaveLength(1)
    const run = ran[0] as Extract<DurableScheduler.DurableOccurrence, { kind: "ran" }>
    expect(run.owner, id).toBe("B")
    expect(run.outcome, id).toBe("succeeded")
    expect(run.fence, id).toBeGreaterThan(r.fence as number)
    // Before the lease A's claim held could have expired: only the release explains it.
    expect(run.startedAt, id).toBeLessThan(sigtermAt + LEASE_MS / 2)
    expect(
      ledger.some((o) => o.kind === "recovered" || o.kind === "fenced-out"),
      id,
    ).toBe(false)
  }
  return causes.sort()
}

describe("SIGTERM under Main.runMain", () => {
  describe("PostgreSQL: another process takes the released runs at once", () => {
    let db: { url: string; drop: () => Promise<void> }
    beforeEach(async () => {
      db = await freshDatabase()
    })
    afterEach(async () => {
      await db.drop()
    })

    for (const [policy, shutdownMs] of [
      ["drain", 1_000],
      ["interrupt", 600_000],
    ] as const) {
      it.live(
        `shutdown "${policy}" (shutdownTimeout ${shutdownMs} ms): the runs in flight are released`,
        () =>
          Effect.gen(function* () {
            const a = worker(db.url, "A", policy, shutdownMs)
            let b: ReturnType<typeof worker> | undefined
            try {
              // A alone claims them; B starts once A holds them all.
              yield* Effect.promise(() => until("A to start", () => a.lines.includes("ready")))
              yield* seed(Postgres.layer({ url: db.url }))
              yield* Effect.promise(() =>
                until(
                  `A to hold and run ${TASKS} runs`,
                  () => a.lines.includes(`held ${TASKS}`) && started(a.lines).length === TASKS,
                ),
              )
              const bb = worker(db.url, "B", policy, shutdownMs)
              b = bb
              yield* Effect.promise(() => until("B to start", () => bb.lines.includes("ready")))
              const sigtermAt = Date.now()
              a.process.kill("SIGTERM")
              const code = yield* Effect.promise(() => exitCode(a))
              // Main.runMain exits 0 after SIGTERM and a clean shutdown (a kill would give null,
              // NodeRuntime.runMain 130).
              expect(code).toBe(0)
              yield* Effect.promise(() =>
                until(`B to run all ${TASKS} tasks`, () => ended(bb.lines).length === TASKS),
              )
              const causes = checkLedgers(
                yield* ledgers(Postgres.layer({ url: db.url })),
                a.lines,
                bb.lines,
                sigtermAt,
              )
              expect(causes).toEqual(Array.from({ length: TASKS }, () => "interrupted"))
            } finally {
              a.process.kill("SIGKILL")
              b?.process.kill("SIGKILL")
              yield* Effect.promise(() => Promise.all([a.exited, b?.exited]))
            }
          }),
        240_000,
      )
    }
  })

  it.live(
    "SQLite: a process waiting for the file takes the released runs as soon as A exits",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const file = dir.file()
        // The file is one process's at a time: the tasks are stored before A opens it.
        yield* seed(sqlite(file))
        const a = worker(file, "A", "drain", 1_000)
        let b: ReturnType<typeof worker> | undefined
        try {
          yield* Effect.promise(() =>
            until(
              `A to hold and run ${TASKS} runs`,
              () => a.lines.includes(`held ${TASKS}`) && started(a.lines).length === TASKS,
            ),
          )
          // B waits for A's lock on the file (up to 120 s).
          b = worker(file, "B", "drain", 1_000)
          const sigtermAt = Date.now()
          a.process.kill("SIGTERM")
          expect(yield* Effect.promise(() => exitCode(a))).toBe(0)
          const bb = b
          yield* Effect.promise(() =>
            until(`B to run all ${TASKS} tasks`, () => ended(bb.lines).length === TASKS),
          )
          bb.process.kill("SIGTERM")
          expect(yield* Effect.promise(() => exitCode(bb))).toBe(0)
          const causes = checkLedgers(yield* ledgers(sqlite(file)), a.lines, bb.lines, sigtermAt)
          expect(causes).toEqual(Array.from({ length: TASKS }, () => "interrupted"))
        } finally {
          a.process.kill("SIGKILL")
          b?.process.kill("SIGKILL")
          yield* Effect.promise(() => Promise.all([a.exited, b?.exited]))
          dir.cleanup()
        }
      }),
    240_000,
  )
})
