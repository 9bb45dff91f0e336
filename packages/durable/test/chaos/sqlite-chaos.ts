/**
 * The chaos run on SQLite: one worker process (fixtures/sqlite-worker.ts) holds the store file
 * (SQLite's exclusive lock: the only process on it) and runs one-shots and recurring tasks
 * while it is killed with SIGKILL at random times and restarted on the same file, as a
 * supervisor would. Nothing else can take its runs over: each restart recovers what the kill
 * cut off (`recover` at open). Counted exactly as the PostgreSQL run is (`analyze` in
 * chaos.ts): due slots from each task's schedule over the whole run; a duplicate is explained
 * only by a kill that came between its claim and its commit.
 *
 * With `diskFullEveryMs`, the disk under the store is filled about that often (chaos/disk.ts: a
 * tmpfs of fixed size where this process may mount one, else the worker's file size limit),
 * from outside the worker, while it runs: held until the worker says the store reported
 * `disk-full`, and a second more (at most half a lease: a commit retried past its lease is
 * another fault), then freed. No kill comes while the disk is full. A full disk explains no
 * duplicate: the store must keep every accepted run and commit it when space returns.
 *
 * The parent reads the file only while no worker holds it: after the fault window it stops the
 * worker with SIGTERM (a clean close: its runs drain), looks, and starts it again until every
 * one-shot is done and every recurring task has moved past the window.
 */

import { type MissedRun, Schedule } from "@tickwork/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { Sqlite } from "../../src/index.ts"
import { child } from "../children.ts"
import { job } from "../fixtures/job.ts"
import { tempDir, withScheduler } from "../helpers.ts"
import {
  analyze,
  type ChaosOptions,
  type ChaosReport,
  type Fault,
  type LedgerEvent,
  type LedgerRun,
} from "./chaos.ts"
import { disk } from "./disk.ts"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A small seeded PRNG (mulberry32). */
const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * The size of the tmpfs the store lives on (where one can be mounted): room for the full run's
 * store and its WAL with a wide margin; the ballast that fills it is freed after each fill.
 */
const TMPFS_MIB = 128

/** Reads (or writes) the store file while no worker holds it. */
const withFile = <A>(file: string, body: (db: Database.Database) => A): A => {
  const db = new Database(file, { timeout: 10_000 })
  try {
    return body(db)
  } finally {
    db.close()
  }
}

/**
 * Runs the SQLite chaos scenario. `killEveryMs` is the mean gap between kills (each gap drawn
 * from 0.25–1.75 of it); `terminateEveryMs`, `restart` and the SIGSTOP do not apply (one
 * process, no server).
 */
export const sqliteChaos = async (o: ChaosOptions): Promise<ChaosReport> => {
  const say = o.log ?? (() => {})
  const random = prng(o.seed)
  const t = tempDir()
  // The store alone on the disk that is filled: the effects logs must not fail with it.
  const store = disk(t.dir, TMPFS_MIB)
  const file = `${store.dir}/tasks.db`
  const started = Date.now()
  const faults: Array<Fault> = []
  const logs: Array<string> = []
  let generation = 0
  type Worker = ReturnType<typeof child> & {
    owner: string
    /** How often it said the store reported `disk-full`, and then that the store works again. */
    readonly said: { full: number; ok: number }
  }
  let worker: Worker | undefined
  const spawn = async (): Promise<Worker> => {
    const owner = `S.${generation++}`
    const log = t.file(`${owner}.log`)
    logs.push(log)
    let ready = false
    const said = { full: 0, ok: 0 }
    const c = child("sqlite-worker.ts", [file, log, owner, String(o.leaseMs)], (line) => {
      if (line === "ready") ready = true
      else if (line === "disk-full") said.full++
      else if (line === "store-ok") said.ok++
    })
    const end = Date.now() + 60_000
    while (!ready) {
      if (Date.now() > end) throw new Error(`sqlite chaos: ${owner} did not start`)
      await sleep(20)
    }
    return { ...c, owner, said }
  }
  const stop = async () => {
    if (worker === undefined) return
    worker.process.kill("SIGTERM")
    await worker.exited
    worker = undefined
  }
  try {
    const seed = job(t.file("seed.log"), "seed")
    const base = Date.now() + 2_000
    const oneShotIds = Array.from({ length: o.oneShots }, (_, k) => `o${k}`)
    const rateIds = Array.from({ length: o.recurring }, (_, k) => `r${k}`)
    const delayIds = Array.from({ length: o.recurring }, (_, k) => `d${k}`)
    const policies: ReadonlyArray<MissedRun.MissedRunPolicy> = ["catch-up", "coalesce", "skip"]
    const policyOf = (k: number) => policies[k % 3] as MissedRun.MissedRunPolicy
    await Effect.runPromise(
      withScheduler(Sqlite.layer({ filename: file }), { handlers: [seed], claim: false }, (api) =>
        Effect.gen(function* () {
          yield* api.scheduleAll(
            oneShotIds.map((id, k) => ({
              id,
              handler: seed,
              payload: { ms: k % 200 },
              schedule: Schedule.at(base + Math.floor((k * o.durationMs) / o.oneShots)),
            })),
          )
          yield* api.scheduleAll([
            ...rateIds.map((id, k) => ({
              id,
              handler: seed,
              payload: { ms: 20 + (k % 80) },
              schedule: Schedule.fixedRate(o.periodMs, { delay: 2_000 + k }),
              missedRuns: policyOf(k),
            })),
            ...delayIds.map((id, k) => ({
              id,
              handler: seed,
              payload: { ms: 20 + (k % 80) },
              schedule: Schedule.fixedDelay(o.periodMs, { delay: 2_000 + k }),
            })),
          ])
        }),
      ) as Effect.Effect<void, unknown>,
    )
    const firstSlot = new Map(
      withFile(file, (db) =>
        db.prepare("SELECT id, slot FROM tickwork_tasks WHERE id LIKE 'r%' OR id LIKE 'd%'").all(),
      ).map((r) => [(r as { id: string }).id, Number((r as { slot: number }).slot)]),
    )
    worker = await spawn()
    say(
      `sqlite chaos: ${o.oneShots + 2 * o.recurring} tasks scheduled, 1 worker, kills for ${o.durationMs} ms`,
    )

    // A full disk: filled under the live worker, held until it says the store reported
    // `disk-full` and a second more (within half a lease), then freed.
    const fillDisk = async (w: Worker) => {
      const pid = w.process.pid as number
      const before = w.said.full
      const at = Date.now()
      const how = store.fill(pid, file)
      const latest = at + o.leaseMs / 2
      while (w.said.full === before && Date.now() < latest) await sleep(20)
      const reached = w.said.full > before
      const reportedIn = Date.now() - at
      if (reached) await sleep(Math.max(0, Math.min(1_000, latest - Date.now())))
      store.free(pid)
      const until = Date.now()
      const detail = `${how}; ${reached ? `the store reported disk-full ${reportedIn} ms in` : "the store did not report disk-full"}`
      faults.push({ kind: "disk-full", at, until, owner: w.owner, detail, reached })
      say(
        `sqlite chaos: +${at - started} ms disk full for ${until - at} ms under ${w.owner}: ${detail}`,
      )
    }

    // The fault timeline: a SIGKILL at a random time, then a restart on the same file; and,
    // with `diskFullEveryMs`, a full disk now and then.
    const end = base + o.durationMs
    const gap = () => Math.floor(o.killEveryMs * (0.25 + 1.5 * random()))
    let nextKill = base + gap()
    let nextFull = o.diskFullEveryMs === undefined ? Infinity : base + o.diskFullEveryMs / 2
    while (Date.now() < end) {
      if (Date.now() >= nextFull) {
        await fillDisk(worker as Worker)
        nextFull = Date.now() + (o.diskFullEveryMs as number)
        // A kill right as space returns is fine; none comes in the same instant.
        nextKill = Math.max(nextKill, Date.now() + 200)
        continue
      }
      if (Date.now() < nextKill) {
        await sleep(10)
        continue
      }
      const w = worker as Worker
      w.process.kill("SIGKILL")
      const at = Date.now()
      await w.exited
      faults.push({ kind: "kill", at, until: at, owner: w.owner, detail: "SIGKILL" })
      say(`sqlite chaos: +${at - started} ms SIGKILL ${w.owner}`)
      worker = await spawn()
      nextKill = Date.now() + gap()
    }

    say("sqlite chaos: faults over; waiting for every one-shot and the recurring tasks to pass")
    const deadline = Date.now() + 180_000
    // Each look stops the worker (the file is its alone): longer runs between looks, so that a
    // worker far behind (a loaded machine) does not spend its time restarting.
    let runFor = 1_000
    for (;;) {
      await sleep(Math.max(0, end + 2 * o.periodMs - Date.now()) + runFor)
      runFor = Math.min(2 * runFor, 16_000)
      await stop()
      const done = withFile(file, (db) => {
        const oneShots = (
          db
            .prepare(
              "SELECT count(*) AS n FROM tickwork_tasks WHERE id LIKE 'o%' AND state = 'done'",
            )
            .get() as { n: number }
        ).n
        const behind = (
          db
            .prepare(
              `SELECT count(*) AS n FROM tickwork_tasks WHERE (id LIKE 'r%' OR id LIKE 'd%')
               AND state IN ('scheduled', 'running') AND slot <= ?`,
            )
            .get(end) as { n: number }
        ).n
        return { oneShots, behind }
      })
      if (done.oneShots === o.oneShots && done.behind === 0) break
      if (Date.now() > deadline) {
        throw new Error(
          `sqlite chaos: timed out waiting for the tasks: ${done.oneShots} of ${o.oneShots} one-shots done, ${done.behind} recurring tasks not past the window`,
        )
      }
      worker = await spawn()
    }
    const { runs, events } = withFile(file, (db) => {
      db.prepare("UPDATE tickwork_tasks SET state = 'cancelled' WHERE state = 'scheduled'").run()
      return {
        runs: db
          .prepare("SELECT task_id, slot, attempt, finished_at, next_run_at FROM tickwork_runs")
          .all() as Array<LedgerRun>,
        events: db
          .prepare(
            "SELECT task_id, kind, first_slot, last_slot FROM tickwork_events WHERE kind IN ('skipped', 'coalesced')",
          )
          .all() as Array<LedgerEvent>,
      }
    })
    return analyze(o, {
      runs,
      events,
      logs,
      faults,
      oneShotIds,
      rateIds,
      delayIds,
      firstSlot,
      base,
      end,
      started,
      policyOf,
    })
  } finally {
    if (worker !== undefined) {
      worker.process.kill("SIGKILL")
      await worker.exited
    }
    store.close()
    t.cleanup()
  }
}
