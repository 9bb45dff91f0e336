/**
 * SPEC §20 across a fleet: three worker processes on one PostgreSQL store enforce a group's
 * concurrency limit and a key's rate limit together, while one worker is killed (SIGKILL) and
 * the server is restarted (`pg_ctl restart -m fast`). Checked from the handlers' own effects
 * logs, not from the store: at no instant do more than `concurrency` runs of the group run — a
 * run ends at its `end` or `interrupted` line, or, for the killed process, at the kill (a dead
 * process runs nothing; its claim counts in the store until its lease lapses, which is later) —
 * no `max + 1` claims of the key fall within `per` of each other, and every task runs to `done`.
 * Runs on a private cluster (test/cluster.ts): the shared server cannot be restarted.
 */
import { existsSync, readFileSync } from "node:fs"
import { PgClient } from "@effect/sql-pg"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { Postgres } from "../src/index.ts"
import { child } from "./children.ts"
import { type Cluster, startCluster } from "./cluster.ts"
import { job, type LogLine, parseLog } from "./fixtures/job.ts"
import { tempDir, withScheduler } from "./helpers.ts"

let cluster: Cluster
beforeAll(async () => {
  cluster = await startCluster()
}, 60_000)
afterAll(() => {
  cluster?.remove()
})

const CONCURRENCY = 3
const RATE = { max: 2, per: 500 }
const limits = { groups: { fleet: { concurrency: CONCURRENCY } }, keys: { rate: RATE } }
const GROUP_TASKS = 150
const KEY_TASKS = 30

const query = <A extends object>(url: string, text: string): Promise<ReadonlyArray<A>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(PgClient.make({ url: Redacted.make(url), maxConnections: 1 }), (sql) =>
        sql.unsafe<A>(text),
      ),
    ).pipe(Effect.provide(Reactivity.layer)),
  )

const until = async (what: string, check: () => boolean | Promise<boolean>, ms: number) => {
  const end = Date.now() + ms
  // A store that is restarting answers nothing: that is a `false`, not a failure.
  while (
    !(await Promise.resolve()
      .then(check)
      .catch(() => false))
  ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const worker = async (url: string, log: string, owner: string) => {
  let ready: () => void = () => {}
  const started = new Promise<void>((resolve) => {
    ready = resolve
  })
  const c = child("pg-worker.ts", [url, log, owner, "2000", JSON.stringify(limits)], (line) => {
    if (line === "ready") ready()
  })
  await Promise.race([
    started,
    c.exited.then((code) => Promise.reject(new Error(`${owner} exited ${code}`))),
  ])
  return c
}

const readLog = (file: string): Array<LogLine> =>
  existsSync(file) ? parseLog(readFileSync(file, "utf8")) : []

/**
 * The most runs at once among `lines` (start/end/interrupted of several processes), a run of
 * `killed` without an end ending at `killedAt`. Ties: an end before a start at the same ms (a
 * start follows the commit of the end that made room, so it is never earlier).
 */
const peakOf = (lines: ReadonlyArray<LogLine>, killed: string, killedAt: number) => {
  const runs = new Map<string, { start: number; end: number }>()
  const key = (l: LogLine) => `${l.owner} ${l.id} ${l.slot} ${l.attempt} ${l.fence}`
  for (const l of lines) {
    if (l.kind === "start") runs.set(key(l), { start: l.at, end: Number.POSITIVE_INFINITY })
    else if (l.kind === "end" || l.kind === "interrupted") {
      const r = runs.get(key(l))
      if (r !== undefined) r.end = Math.min(r.end, l.at)
    }
  }
  const points: Array<[number, number]> = []
  for (const [k, r] of runs) {
    const end = r.end === Number.POSITIVE_INFINITY && k.startsWith(`${killed} `) ? killedAt : r.end
    points.push([r.start, 1], [end, -1])
  }
  points.sort((x, y) => x[0] - y[0] || x[1] - y[1])
  let now = 0
  let max = 0
  for (const [, d] of points) {
    now += d
    max = Math.max(max, now)
  }
  return { max, runs: runs.size }
}

describe("flow control across a fleet (SPEC §20)", () => {
  it.live(
    `3 workers, a kill and a pg_ctl restart: a group's concurrency ${CONCURRENCY} and a key's rate ${RATE.max}/${RATE.per} ms are never exceeded, nothing is lost`,
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const logs = { A: t.file("A.log"), B: t.file("B.log"), C: t.file("C.log") }
        const url = cluster.url
        const seed = job(t.file("seed.log"), "seed")
        yield* withScheduler(
          Postgres.layer({ url }),
          { handlers: [seed], claim: false, limits },
          (api) =>
            api.scheduleAll([
              ...Array.from({ length: GROUP_TASKS }, (_, k) => ({
                id: `g${k}`,
                handler: seed,
                payload: { ms: 100 },
                schedule: Schedule.once(0),
                group: "fleet",
              })),
              ...Array.from({ length: KEY_TASKS }, (_, k) => ({
                id: `k${k}`,
                handler: seed,
                payload: { ms: 0 },
                schedule: Schedule.once(0),
                key: "customer-1",
              })),
            ]),
        )
        // Started together: each claims from the start, so the kill comes with the work spread.
        const [a, b, c] = yield* Effect.promise(() =>
          Promise.all([
            worker(url, logs.A, "A"),
            worker(url, logs.B, "B"),
            worker(url, logs.C, "C"),
          ]),
        )
        const started = (file: string) => readLog(file).filter((l) => l.kind === "start").length
        // Kill A while it holds runs of the group (a start with no end yet).
        yield* Effect.promise(() =>
          until(
            "A to be running a run of the group",
            () => {
              const lines = readLog(logs.A).filter((l) => l.id.startsWith("g"))
              const open = new Set(lines.filter((l) => l.kind === "start").map((l) => l.id))
              for (const l of lines) if (l.kind !== "start") open.delete(l.id)
              return open.size > 0
            },
            60_000,
          ),
        )
        a.process.kill("SIGKILL")
        const killedAt = Date.now()
        yield* Effect.promise(() => a.exited)
        const before = started(logs.B) + started(logs.C)
        yield* Effect.promise(() =>
          until(
            "B and C to start more runs",
            () => started(logs.B) + started(logs.C) > before + 3,
            60_000,
          ),
        )
        cluster.restart()
        yield* Effect.promise(() =>
          until(
            "every task to be done",
            async () => {
              const [row] = await query<{ n: string }>(
                url,
                "SELECT count(*)::text AS n FROM tickwork_tasks WHERE state = 'done'",
              )
              return Number(row?.n) === GROUP_TASKS + KEY_TASKS
            },
            180_000,
          ),
        )
        b.process.kill("SIGKILL")
        c.process.kill("SIGKILL")
        yield* Effect.promise(() => Promise.all([b.exited, c.exited]))
        const lines = [...readLog(logs.A), ...readLog(logs.B), ...readLog(logs.C)]
        const group = peakOf(
          lines.filter((l) => l.id.startsWith("g")),
          "A",
          killedAt,
        )
        expect(group.max).toBeLessThanOrEqual(CONCURRENCY)
        // Rate: the claims of the key's runs (each start carries its claim time), in order.
        const claims = lines
          .filter((l) => l.kind === "start" && l.id.startsWith("k"))
          .map((l) => l.claimedAt)
          .sort((x, y) => x - y)
        for (let k = RATE.max; k < claims.length; k++) {
          expect((claims[k] as number) - (claims[k - RATE.max] as number)).toBeGreaterThanOrEqual(
            RATE.per,
          )
        }
        // Nothing lost: every task ended by its handler's own `end`.
        const ended = new Set(lines.filter((l) => l.kind === "end").map((l) => l.id))
        for (let k = 0; k < GROUP_TASKS; k++) expect(ended.has(`g${k}`)).toBe(true)
        for (let k = 0; k < KEY_TASKS; k++) expect(ended.has(`k${k}`)).toBe(true)
        console.log(
          `fleet limits: ${group.runs} group runs, peak ${group.max} of ${CONCURRENCY}; ` +
            `${claims.length} key claims; starts by A/B/C ${started(logs.A)}/${started(logs.B)}/${started(logs.C)}`,
        )
        t.cleanup()
      }),
    300_000,
  )
})
