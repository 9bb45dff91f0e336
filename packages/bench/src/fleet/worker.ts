/**
 * One worker process of the fleet part: `worker.ts <system> <settings> <url> <owner>`, where
 * system is `tickwork`, `pg-boss` or `graphile-worker` and settings `defaults` or `fast` (see
 * settings.ts). Every job's payload is `{ k, t, ms }` (key, when it was due, how long it runs);
 * the process prints `s <k> <now>` when a job starts and `e <k> <now>` when it ends (stdout to a
 * pipe is synchronous on Linux: a line printed before a SIGKILL is not lost), and `ready` once it
 * takes jobs. `FLEET_LEGS=1` (tickwork only): the pickup path's timestamps too (probe.ts).
 */
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { DurableScheduler, Handler, Postgres } from "@tickwork/durable"
import { Effect, Layer, Schema } from "effect"
import { run as graphileRun } from "graphile-worker"
import { PgBoss } from "pg-boss"
import * as Probe from "./probe.ts"
import { CONCURRENCY, QUEUE, type Settings, settings } from "./settings.ts"

const [system, which, url, owner] = process.argv.slice(2) as [string, Settings, string, string]

interface Job {
  readonly k: string
  readonly t: number
  readonly ms: number
}

/**
 * `FLEET_PROFILE=<dir>`: worker `fleet-1` (never the one killed) records a CPU profile from its
 * start until it receives SIGUSR2 (the part sends it once the burst is done), written to
 * `<dir>/<system>-<settings>.cpuprofile`.
 */
const profileDir = process.env.FLEET_PROFILE
if (profileDir !== undefined && profileDir !== "" && owner === "fleet-1") {
  const session = new Session()
  session.connect()
  await session.post("Profiler.enable")
  await session.post("Profiler.setSamplingInterval", { interval: 200 })
  await session.post("Profiler.start")
  process.once("SIGUSR2", () => {
    void session.post("Profiler.stop").then(({ profile }) => {
      writeFileSync(`${profileDir}/${system}-${which}.cpuprofile`, JSON.stringify(profile))
      process.stdout.write("profiled\n")
    })
  })
}

// SIGUSR1: the CPU time this process used so far (µs, user + system), for the part's CPU per job.
process.on("SIGUSR1", () => {
  const u = process.cpuUsage()
  process.stdout.write(`cpu ${u.user + u.system}\n`)
})

const started = (k: string) => process.stdout.write(`s ${k} ${Date.now()}\n`)
const ended = (k: string) => process.stdout.write(`e ${k} ${Date.now()}\n`)
const pause = (ms: number) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : undefined)

const tickwork = async () => {
  const s = settings.tickwork[which]
  const noop = Handler.make(
    QUEUE,
    Schema.Struct({ k: Schema.String, t: Schema.Number, ms: Schema.Number }),
    (p) =>
      Effect.gen(function* () {
        started(p.k)
        Probe.ran(p.k)
        if (p.ms > 0) yield* Effect.sleep(p.ms)
        ended(p.k)
      }),
  )
  await Effect.runPromise(
    Effect.gen(function* () {
      console.log("ready")
      yield* Effect.never
    }).pipe(
      Effect.provide(
        DurableScheduler.layer({
          handlers: [noop],
          owner,
          workers: CONCURRENCY,
          ...s.scheduler,
        }).pipe(Layer.provide(Probe.probed(Postgres.layer({ url, maxConnections: 8 })))),
      ),
    ),
  )
}

const pgBoss = async () => {
  const s = settings["pg-boss"][which]
  const boss = new PgBoss({ connectionString: url, max: 8, ...s.constructor })
  boss.on("error", () => {})
  await boss.start()
  // A batch's jobs run concurrently (with batchSize 1, one at a time per worker).
  await boss.work<Job>(QUEUE, { ...s.work }, async (jobs) => {
    await Promise.all(
      jobs.map(async (job) => {
        started(job.data.k)
        await pause(job.data.ms)
        ended(job.data.k)
      }),
    )
  })
  console.log("ready")
}

const graphile = async () => {
  const { says: _, ...s } = settings["graphile-worker"][which] as {
    readonly says: string
    readonly pollInterval?: number
    readonly preset?: object
  }
  await graphileRun({
    connectionString: url,
    concurrency: CONCURRENCY,
    maxPoolSize: CONCURRENCY + 2,
    noHandleSignals: true,
    ...s,
    taskList: {
      [QUEUE]: async (payload) => {
        const job = payload as Job
        started(job.k)
        await pause(job.ms)
        ended(job.k)
      },
    },
  })
  console.log("ready")
}

await (system === "tickwork" ? tickwork() : system === "pg-boss" ? pgBoss() : graphile())
