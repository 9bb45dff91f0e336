/**
 * Part 7 — the fleet: tickwork, pg-boss and graphile-worker on one throwaway PostgreSQL, same
 * run, same workload, each in a fresh database, each at its documented defaults and at its
 * fastest documented settings (src/fleet/settings.ts), 3 worker processes of 32 jobs each:
 * 1. burst: 10k one-shot no-op jobs due now, inserted in bulk: jobs/s from the insert to the
 *    last job's end;
 * 2. steady: 1k jobs/s due now for 10 s (10 every 10 ms, each running 50 ms), inserted by this
 *    process: pickup = job start − insert time, p50/p99, and p99 apart for the jobs inserted
 *    before the kill (3 processes) and from 1 s after it (2 processes);
 * 3. failover: 5 s into the steady phase one of the 3 processes is killed with SIGKILL; for
 *    each job it had in flight, the time from the kill to its start in another process (waited
 *    for up to 20 s after the steady phase; a system that only frees them later says so).
 * Lost = jobs never started; duplicates beyond in-flight = jobs started twice whose first start
 * was not in flight at the kill.
 *
 * The spinning-process variant (`FLEET_SPIN`, on by default: two more rows, about 2 minutes):
 * tickwork fast and graphile-worker fast again, each with one more process spinning a core
 * (`node -e "for(;;){}"`) for the whole steady phase, as part 3 does for lateness. `FLEET_SPIN=0`
 * leaves them out; `FLEET_SPIN=only` runs only those two (with their bursts, spinner off).
 *
 * `FLEET_LEGS=1`: tickwork's workers also print their pickup path's timestamps (notice, wake,
 * claim sent/answered, run start; see src/fleet/probe.ts) and the part prints where the steady
 * phase's pickup went, leg by leg (src/fleet/legs.ts), per tickwork row.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { loadavg } from "node:os"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { Schedule } from "@tickwork/core"
import { DurableScheduler, Handler, Postgres } from "@tickwork/durable"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { makeWorkerUtils } from "graphile-worker"
import { PgBoss } from "pg-boss"
import * as Server from "../durable/postgres.ts"
import { type LegReport, legReport, legTable, WorkerTrace } from "../fleet/legs.ts"
import { hiNow } from "../fleet/probe.ts"
import { QUEUE, type Settings, settings } from "../fleet/settings.ts"
import { int, table } from "../lib/format.ts"

/** The systems compared. */
export type System = "tickwork" | "pg-boss" | "graphile-worker"

/** One row of the fleet table. */
export interface FleetRow {
  readonly system: System
  readonly settings: Settings
  /** Whether a spinning process ran beside the steady phase (`FLEET_SPIN`). */
  readonly spin: boolean
  readonly says: string
  readonly burstJobsPerS: number
  readonly pickupP50: number
  readonly pickupP99: number
  /**
   * Pickup p99 of the jobs inserted before the kill (3 processes), and of those inserted from
   * 1 s after it (2 processes: the same load on two thirds of the workers).
   */
  readonly pickupP99Three: number
  readonly pickupP99Two: number
  /** Jobs the kill cut off, and how long each took to start elsewhere (ms). */
  readonly cut: number
  readonly failover: ReadonlyArray<number>
  /** Cut-off jobs not started elsewhere within the wait. */
  readonly notRestarted: number
  readonly lost: number
  readonly beyondInFlight: number
  readonly seconds: number
  /**
   * CPU time per burst job (µs, user + system) of the three workers together, and of the
   * PostgreSQL backends (NaN when unknown: a `DATABASE_URL` server).
   */
  readonly workerCpuUs: number
  readonly pgCpuUs: number
  /** Which repetition (`FLEET_REPS`), from 1. */
  readonly rep?: number | undefined
  /**
   * Where the steady phase's pickup went (`FLEET_LEGS=1`, tickwork rows): the jobs inserted
   * before the kill (3 processes) and from 1 s after it (2 processes), apart.
   */
  readonly legs?: { readonly three: LegReport; readonly two: LegReport } | undefined
  /** Load average (1 min) at the row's start. */
  readonly load: number
  readonly error?: string | undefined
}

/** A run that ended this shortly before the kill may not have committed: it counts in flight. */
const COMMIT_SLACK_MS = 1_000

/** How long the burst may take before a row is judged too slow for the steady phase. */
const BURST_CAP_MS = 45_000

const worker = fileURLToPath(new URL("../fleet/worker.ts", import.meta.url))
const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ??
  Number.NaN

/** What the workers printed: per key, its starts and ends (owner index, time). */
class Events {
  readonly starts = new Map<string, Array<{ w: number; at: number }>>()
  readonly ends = new Map<string, Array<{ w: number; at: number }>>()
  started = 0
  ended = 0
  /** A worker wrote its CPU profile (`FLEET_PROFILE`). */
  profiled = false
  /** Each worker's latest CPU reading (µs), in answer to SIGUSR1. */
  readonly cpu = new Map<number, number>()
  /** Each worker's pickup-path timestamps (`FLEET_LEGS=1`). */
  readonly traces = [new WorkerTrace(), new WorkerTrace(), new WorkerTrace()]
  line(w: number, line: string) {
    const [kind, k, at] = line.split(" ")
    if (k === undefined || at === undefined) return
    const map = kind === "s" ? this.starts : kind === "e" ? this.ends : undefined
    if (map === undefined) return
    const list = map.get(k) ?? []
    list.push({ w, at: Number(at) })
    map.set(k, list)
    if (kind === "s") this.started++
    else this.ended++
  }
}

interface Proc {
  readonly process: ChildProcess
  readonly exited: Promise<void>
}

const startWorker = async (
  system: System,
  which: Settings,
  url: string,
  index: number,
  events: Events,
): Promise<Proc> => {
  const p = spawn(
    process.execPath,
    [
      "--conditions=@tickwork/source",
      "--import",
      "tsx",
      worker,
      system,
      which,
      url,
      `fleet-${index}`,
    ],
    {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "ignore"],
    },
  )
  let ready = false
  createInterface({ input: p.stdout as NonNullable<typeof p.stdout> }).on("line", (line) => {
    if (line === "ready") ready = true
    else if (line === "profiled") events.profiled = true
    else if (line.startsWith("cpu ")) events.cpu.set(index, Number(line.slice(4)))
    else if (!events.traces[index]?.line(line)) events.line(index, line)
  })
  const exited = new Promise<void>((resolve) => p.once("exit", () => resolve()))
  const end = Date.now() + 60_000
  while (!ready) {
    if (p.exitCode !== null) throw new Error(`${system} worker ${index} exited ${p.exitCode}`)
    if (Date.now() > end) throw new Error(`${system} worker ${index} did not start`)
    await sleep(20)
  }
  return { process: p, exited }
}

interface Job {
  readonly k: string
  readonly t: number
  readonly ms: number
}

/** Inserts jobs due now, for one system. */
interface Producer {
  readonly add: (jobs: ReadonlyArray<Job>) => Promise<void>
  readonly close: () => Promise<void>
}

const noop = Handler.make(
  QUEUE,
  Schema.Struct({ k: Schema.String, t: Schema.Number, ms: Schema.Number }),
  () => Effect.void,
)

const producer = async (system: System, which: Settings, url: string): Promise<Producer> => {
  if (system === "tickwork") {
    // A scheduler that only schedules, as an application process would.
    const layer = DurableScheduler.layer({ handlers: [noop], claim: false }).pipe(
      Layer.provideMerge(Postgres.layer({ url, maxConnections: 4 })),
    )
    const managed = ManagedRuntime.make(layer)
    const d = await managed.runPromise(DurableScheduler.DurableScheduler.useSync((x) => x))
    return {
      add: (jobs) =>
        managed.runPromise(
          d.scheduleAll(
            jobs.map((j) => ({
              id: j.k,
              handler: noop,
              payload: j,
              schedule: Schedule.once(0),
            })),
          ),
        ) as Promise<unknown> as Promise<void>,
      close: () => managed.dispose(),
    }
  }
  if (system === "pg-boss") {
    const s = settings["pg-boss"][which]
    const boss = new PgBoss({ connectionString: url, max: 4, supervise: false, schedule: false })
    boss.on("error", () => {})
    await boss.start()
    await boss.createQueue(QUEUE, { ...s.queue })
    return {
      add: async (jobs) => {
        await boss.insert(
          QUEUE,
          jobs.map((j) => ({ data: j })),
        )
      },
      close: () => boss.stop({ graceful: false }),
    }
  }
  const utils = await makeWorkerUtils({ connectionString: url })
  await utils.migrate()
  return {
    add: async (jobs) => {
      await utils.addJobs(jobs.map((j) => ({ identifier: QUEUE, payload: j })))
    },
    close: async () => {
      await utils.release()
    },
  }
}

/** The workers' summed CPU (µs, asked by SIGUSR1) and the server's (ms), now. */
const cpuNow = async (
  procs: ReadonlyArray<Proc>,
  events: Events,
  server: Server.Server,
): Promise<{ workers: number; pgMs: number }> => {
  events.cpu.clear()
  for (const p of procs) p.process.kill("SIGUSR1")
  await waitFor(() => events.cpu.size === procs.length, 5_000)
  let workers = 0
  for (const us of events.cpu.values()) workers += us
  if (events.cpu.size < procs.length) workers = Number.NaN
  return { workers, pgMs: server.cpuMs() ?? Number.NaN }
}

const waitFor = async (check: () => boolean, ms: number): Promise<boolean> => {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) return false
    await sleep(20)
  }
  return true
}

/** `FLEET_BURST_ONLY=1`: each row measures the burst only (for repeated, interleaved reps). */
const burstOnly = (): boolean => process.env.FLEET_BURST_ONLY === "1"

/** What a burst-only row says instead of its steady phase. */
const BURST_ONLY = "burst only (FLEET_BURST_ONLY)"

/** `FLEET_SPIN`: "0" leaves the spinning-process rows out, "only" runs just them. */
const spinRows = (): "with" | "without" | "only" => {
  const v = process.env.FLEET_SPIN
  return v === "0" ? "without" : v === "only" ? "only" : "with"
}

/** The systems that get a spinning-process row (at their fast settings). */
const SPIN_SYSTEMS: ReadonlyArray<System> = ["tickwork", "graphile-worker"]

/** A row's settings as the tables print them. */
const label = (r: { readonly settings: Settings; readonly spin: boolean }) =>
  r.spin ? `${r.settings} + spin` : r.settings

/** A process that spins one core until killed (part 3's competing load). */
const spinner = (): Proc => {
  const p = spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" })
  return { process: p, exited: new Promise<void>((resolve) => p.once("exit", () => resolve())) }
}

/**
 * One row: one system at one setting, in a fresh database; with `spin`, one spinning process
 * runs beside its steady phase.
 */
export const fleetRow = async (
  server: Server.Server,
  system: System,
  which: Settings,
  log: (line: string) => void,
  spin = false,
): Promise<FleetRow> => {
  const began = Date.now()
  const load = loadavg()[0] ?? Number.NaN
  const name = `${system} (${label({ settings: which, spin })})`
  const db = await Server.freshDatabase(server)
  const events = new Events()
  const procs: Array<Proc> = []
  let spinning: Proc | undefined
  let prod: Producer | undefined
  try {
    prod = await producer(system, which, db.url)
    for (let w = 0; w < 3; w++) procs.push(await startWorker(system, which, db.url, w, events))
    log(`fleet: ${name}: 3 workers ready`)
    // 1. Burst: 10k no-op jobs due now, in bulk.
    const burst = Array.from({ length: 10_000 }, (_, k) => ({ k: `b${k}`, t: 0, ms: 0 }))
    const cpuBefore = await cpuNow(procs, events, server)
    const burstAt = Date.now()
    for (let i = 0; i < burst.length; i += 1_000) {
      const now = Date.now()
      await prod.add(burst.slice(i, i + 1_000).map((j) => ({ ...j, t: now })))
    }
    const burstDone = await waitFor(() => events.ended >= burst.length, BURST_CAP_MS)
    const lastEnd = Math.max(
      ...[...events.ends.values()].map((list) => Math.max(...list.map((e) => e.at))),
    )
    const burstJobsPerS = burstDone
      ? burst.length / ((lastEnd - burstAt) / 1000)
      : events.ended / ((Date.now() - burstAt) / 1000)
    const cpuAfter = await cpuNow(procs, events, server)
    const workerCpuUs = (cpuAfter.workers - cpuBefore.workers) / events.ended
    const pgCpuUs = ((cpuAfter.pgMs - cpuBefore.pgMs) * 1000) / events.ended
    log(
      `fleet: ${name}: burst ${int(burstJobsPerS)} jobs/s; CPU per job: workers ${int(workerCpuUs)} µs, PostgreSQL ${int(pgCpuUs)} µs`,
    )
    if (process.env.FLEET_PROFILE !== undefined && process.env.FLEET_PROFILE !== "") {
      // The burst's profile of worker 1 (see worker.ts); the steady phase is not in it.
      ;(procs[1] as Proc).process.kill("SIGUSR2")
      await waitFor(() => events.profiled, 10_000)
    }
    if (!burstDone || burstOnly()) {
      // It cannot keep up with 1k jobs/s either: its steady phase would measure its backlog.
      return {
        system,
        settings: which,
        spin,
        load,
        says: settings[system][which].says,
        burstJobsPerS,
        workerCpuUs,
        pgCpuUs,
        pickupP50: Number.NaN,
        pickupP99: Number.NaN,
        pickupP99Three: Number.NaN,
        pickupP99Two: Number.NaN,
        cut: 0,
        failover: [],
        notRestarted: 0,
        lost: Number.NaN,
        beyondInFlight: Number.NaN,
        seconds: (Date.now() - began) / 1000,
        error: burstDone
          ? BURST_ONLY
          : `${events.ended} of 10k burst jobs done in ${BURST_CAP_MS / 1000} s: too slow for 1k jobs/s, steady phase skipped`,
      }
    }
    // 2. Steady 1k/s for 10 s, 50 ms each; 3. SIGKILL of worker 0 at 5 s.
    if (spin) spinning = spinner()
    const steadyFrom = Date.now()
    const steadyFromHi = hiNow()
    let inserted = 0
    let killedAt = 0
    const insertTimes = new Map<string, number>()
    // The same insert on the µs clock the workers' probes read, and when its call returned.
    const sentHi = new Map<string, number>()
    const answeredHi = new Map<string, number>()
    const pending: Array<Promise<void>> = []
    while (inserted < 10_000) {
      const due = Math.min(10_000, Math.floor(Date.now() - steadyFrom))
      if (due > inserted) {
        const now = Date.now()
        const jobs = Array.from({ length: due - inserted }, (_, i) => ({
          k: `s${inserted + i}`,
          t: now,
          ms: 50,
        }))
        const hi = hiNow()
        for (const j of jobs) {
          insertTimes.set(j.k, now)
          sentHi.set(j.k, hi)
        }
        inserted = due
        pending.push(
          prod.add(jobs).then(() => {
            const back = hiNow()
            for (const j of jobs) answeredHi.set(j.k, back)
          }),
        )
      }
      if (killedAt === 0 && Date.now() - steadyFrom >= 5_000) {
        ;(procs[0] as Proc).process.kill("SIGKILL")
        killedAt = Date.now()
      }
      await sleep(10)
    }
    await Promise.all(pending)
    const steadyKeys = Array.from({ length: 10_000 }, (_, k) => `s${k}`)
    // In flight at the kill: started by worker 0 before it, and not ended, or ended less than
    // a second before it (its completion may not have reached the database).
    const endOf = (k: string) => (events.ends.get(k) ?? []).find((e) => e.w === 0)
    const cutKeys = steadyKeys.filter((k) => {
      const s = events.starts.get(k)?.find((x) => x.w === 0 && x.at <= killedAt)
      const e = endOf(k)
      return s !== undefined && (e === undefined || e.at >= killedAt - COMMIT_SLACK_MS)
    })
    const restarted = (k: string) =>
      (events.starts.get(k) ?? []).some((x) => x.w !== 0 && x.at >= killedAt)
    // Those that never ended must start again elsewhere.
    const mustRestart = cutKeys.filter((k) => endOf(k) === undefined)
    await waitFor(
      () => steadyKeys.every((k) => events.starts.has(k)) && mustRestart.every((k) => restarted(k)),
      20_000,
    )
    const steadyToHi = hiNow()
    if (spinning !== undefined) {
      spinning.process.kill("SIGKILL")
      await spinning.exited
      spinning = undefined
    }
    const failover = cutKeys
      .map((k) =>
        Math.min(
          ...(events.starts.get(k) ?? [])
            .filter((x) => x.w !== 0 && x.at >= killedAt)
            .map((x) => x.at - killedAt),
        ),
      )
      .filter((x) => Number.isFinite(x))
      .sort((a, b) => a - b)
    const notRestarted = mustRestart.filter((k) => !restarted(k)).length
    // Pickup: first start − insert time.
    const pickups: Array<number> = []
    const three: Array<number> = []
    const two: Array<number> = []
    for (const k of steadyKeys) {
      const first = events.starts.get(k)?.[0]
      const t = insertTimes.get(k)
      if (first === undefined || t === undefined) continue
      pickups.push(first.at - t)
      if (t < killedAt) three.push(first.at - t)
      else if (t >= killedAt + 1_000) two.push(first.at - t)
    }
    for (const list of [pickups, three, two]) list.sort((a, b) => a - b)
    const all = [...burst.map((j) => j.k), ...steadyKeys]
    const lost = all.filter((k) => !events.starts.has(k)).length
    const cutSet = new Set(cutKeys)
    const beyond = all.filter((k) => (events.starts.get(k)?.length ?? 0) > 1 && !cutSet.has(k))
    for (const k of beyond.slice(0, 5)) {
      log(
        `fleet: ${name}: ${k} started twice: ${JSON.stringify(events.starts.get(k))}, ends ${JSON.stringify(events.ends.get(k))}, kill at ${killedAt}`,
      )
    }
    const beyondInFlight = beyond.length
    const traced = events.traces.some((t) => t.claims.length > 0)
    const legsOf = (keys: ReadonlyArray<string>, from: number, to: number) =>
      legReport(keys, sentHi, answeredHi, events.traces, events.ends, from, to)
    const killedAtHi = steadyFromHi + (killedAt - steadyFrom)
    return {
      system,
      settings: which,
      spin,
      load,
      ...(traced
        ? {
            legs: {
              three: legsOf(
                steadyKeys.filter((k) => (insertTimes.get(k) ?? 0) < killedAt),
                steadyFromHi,
                killedAtHi,
              ),
              two: legsOf(
                steadyKeys.filter((k) => (insertTimes.get(k) ?? 0) >= killedAt + 1_000),
                killedAtHi + 1_000,
                steadyToHi,
              ),
            },
          }
        : {}),
      says: settings[system][which].says,
      burstJobsPerS,
      workerCpuUs,
      pgCpuUs,
      pickupP50: percentile(pickups, 50),
      pickupP99: percentile(pickups, 99),
      pickupP99Three: percentile(three, 99),
      pickupP99Two: percentile(two, 99),
      cut: mustRestart.length,
      failover,
      notRestarted,
      lost,
      beyondInFlight,
      seconds: (Date.now() - began) / 1000,
    }
  } finally {
    spinning?.process.kill("SIGKILL")
    for (const p of procs) p.process.kill("SIGKILL")
    await Promise.all(procs.map((p) => p.exited))
    await prod?.close().catch(() => {})
    await db.drop().catch(() => {})
  }
}

/** The fleet table. */
export const fleetTable = (rows: ReadonlyArray<FleetRow>): string =>
  table(
    [
      { title: "rep", align: "right" },
      { title: "load", align: "right" },
      { title: "system" },
      { title: "settings" },
      { title: "burst jobs/s", align: "right" },
      { title: "CPU µs/job: workers / PG", align: "right" },
      { title: "pickup p50 ms", align: "right" },
      { title: "pickup p99 ms", align: "right" },
      { title: "p99: 3 / 2 processes", align: "right" },
      { title: "failover p50 / p99 / max ms (cut off)", align: "right" },
      { title: "lost", align: "right" },
      { title: "dup. beyond in-flight", align: "right" },
    ],
    rows.map((r) => [
      String(r.rep ?? 1),
      Number.isFinite(r.load) ? r.load.toFixed(1) : "–",
      r.system,
      label(r),
      Number.isFinite(r.burstJobsPerS)
        ? `${int(r.burstJobsPerS)}${r.error === undefined || r.error === BURST_ONLY ? "" : " (unfinished)"}`
        : "error",
      `${int(r.workerCpuUs)} / ${int(r.pgCpuUs)}`,
      int(r.pickupP50),
      int(r.pickupP99),
      `${int(r.pickupP99Three)} / ${int(r.pickupP99Two)}`,
      r.error !== undefined
        ? "not run"
        : r.cut === 0
          ? "none in flight"
          : r.failover.length === 0
            ? `none within 20 s (${r.cut})`
            : `${int(percentile(r.failover, 50))} / ${int(percentile(r.failover, 99))} / ${int(r.failover[r.failover.length - 1] ?? Number.NaN)} (${r.cut}${r.notRestarted > 0 ? `, ${r.notRestarted} not within 20 s` : ""})`,
      String(r.lost),
      String(r.beyondInFlight),
    ]),
  )

/** Whether `value` is in the comma list `list` (every value when unset). */
const only = (list: string | undefined, value: string): boolean =>
  list === undefined || list === "" || list.split(",").includes(value)

/**
 * Runs every row (each system at both settings; `FLEET_SYSTEMS=tickwork,pg-boss` and
 * `FLEET_SETTINGS=fast` narrow it) on one throwaway PostgreSQL server, then prints
 * tickwork's headline line: `fleet: failover p99 …, pickup p99 …, lost …, duplicates beyond
 * in-flight …` (its fast row).
 */
export const runFleet = async (
  log: (line: string) => void,
): Promise<{ rows: Array<FleetRow>; table: string; summary: string; server: string }> => {
  const server = await Server.start()
  const rows: Array<FleetRow> = []
  // `FLEET_REPS=n`: the whole set of rows n times over, interleaved (rep 1's rows, then rep 2's),
  // so that each rep's ratios compare rows measured minutes apart at most.
  const reps = Math.max(1, Number(process.env.FLEET_REPS ?? 1) || 1)
  try {
    const spins = spinRows()
    // Each rep's plain rows, then its spinning-process rows (fast only).
    const plan: Array<{ system: System; which: Settings; spin: boolean }> = []
    for (const spin of [false, true]) {
      if (spin ? spins === "without" : spins === "only") continue
      for (const which of ["defaults", "fast"] as const) {
        if (!only(process.env.FLEET_SETTINGS, which) || (spin && which !== "fast")) continue
        for (const system of ["tickwork", "pg-boss", "graphile-worker"] as const) {
          if (!only(process.env.FLEET_SYSTEMS, system)) continue
          if (spin && !SPIN_SYSTEMS.includes(system)) continue
          plan.push({ system, which, spin })
        }
      }
    }
    for (let rep = 0; rep < reps; rep++)
      for (const { system, which, spin } of plan) {
        try {
          rows.push({ ...(await fleetRow(server, system, which, log, spin)), rep: rep + 1 })
        } catch (error) {
          log(`fleet: ${system} (${label({ settings: which, spin })}) failed: ${String(error)}`)
          rows.push({
            system,
            settings: which,
            spin,
            load: Number.NaN,
            says: settings[system][which].says,
            burstJobsPerS: Number.NaN,
            workerCpuUs: Number.NaN,
            pgCpuUs: Number.NaN,
            pickupP50: Number.NaN,
            pickupP99: Number.NaN,
            pickupP99Three: Number.NaN,
            pickupP99Two: Number.NaN,
            cut: 0,
            failover: [],
            notRestarted: 0,
            lost: Number.NaN,
            beyondInFlight: Number.NaN,
            seconds: 0,
            rep: rep + 1,
            error: String(error),
          })
        }
      }
  } finally {
    server.stop()
  }
  const mine = rows.find((r) => r.system === "tickwork" && r.settings === "fast" && !r.spin)
  const spun = rows.filter((r) => r.system === "tickwork" && r.spin)
  const summary = `${
    mine === undefined
      ? "fleet: no tickwork row"
      : `fleet: failover p99 ${int(percentile(mine.failover, 99))} ms, pickup p99 ${int(mine.pickupP99)} ms (3 processes ${int(mine.pickupP99Three)}, 2 after the kill ${int(mine.pickupP99Two)}), lost ${mine.lost}, duplicates beyond in-flight ${mine.beyondInFlight}`
  }${
    spun.length === 0
      ? ""
      : `\nfleet: with a spinning process, pickup p99 ${spun.map((r) => `${int(r.pickupP99)} ms`).join(", ")} (graphile-worker fast: ${
          rows
            .filter((r) => r.system === "graphile-worker" && r.spin)
            .map((r) => `${int(r.pickupP99)} ms`)
            .join(", ") || "not run"
        })`
  }`
  const notes = rows.map((r) => `  ${r.system} ${r.settings}: ${r.says}`)
  const legs = rows.flatMap((r) => {
    if (r.legs === undefined) return []
    const name = `${reps > 1 ? `rep ${r.rep} ` : ""}${label(r)}`
    return [
      { label: `${name}, 3 processes`, report: r.legs.three },
      { label: `${name}, 2 processes`, report: r.legs.two },
    ]
  })
  // Per rep: tickwork's burst over each peer's at the same settings, measured in that rep.
  const ratios: Array<string> = []
  for (let rep = 1; rep <= reps; rep++) {
    for (const r of rows) {
      if (r.rep !== rep || r.system !== "tickwork") continue
      for (const peer of rows) {
        if (
          peer.rep !== rep ||
          peer.system === "tickwork" ||
          peer.settings !== r.settings ||
          peer.spin !== r.spin
        )
          continue
        ratios.push(
          `  rep ${rep}: tickwork ${label(r)} burst / ${peer.system}'s = ${(r.burstJobsPerS / peer.burstJobsPerS).toFixed(2)}× (${int(r.burstJobsPerS)} / ${int(peer.burstJobsPerS)} jobs/s)`,
        )
      }
    }
  }
  return {
    rows,
    table: `${fleetTable(rows)}\n${[...new Set(notes)].join("\n")}${rows
      .filter((r) => r.error !== undefined)
      .map((r) => `\n  ${r.system} ${label(r)}: ${r.error}`)
      .join("")}${
      legs.length === 0
        ? ""
        : `\n\nWhere tickwork's steady-phase pickup went (FLEET_LEGS=1):\n${legTable(legs)}`
    }`,
    summary: ratios.length > 0 ? `${summary}\n${ratios.join("\n")}` : summary,
    server: server.origin,
  }
}
