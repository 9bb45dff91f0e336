/**
 * `Prometheus.layer` serves the scheduler's metrics in the Prometheus text format, and a real
 * Prometheus (Debian's `prometheus`, installed by `.ci/setup`) scrapes them: it runs as a child
 * process with its own config and data directory on a loopback port, and the test asks its HTTP
 * API for the series. Everything runs on the real clock; waits poll the real processes with
 * generous deadlines. The harness is `@tickwork/testkit/Prometheus`, shared with durable's tests.
 */
import { request } from "node:http"
import * as RealPrometheus from "@tickwork/testkit/Prometheus"
import { Cause, Effect, Exit, Layer, ManagedRuntime, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Prometheus, Schedule, Scheduler } from "../src/index.ts"

/** A scheduler named `name` running a task every 100 ms, with a scrape endpoint on a free port. */
const startScheduler = async (name: string, options: Prometheus.Options = {}) => {
  const runtime = ManagedRuntime.make(
    Layer.merge(
      Scheduler.layer({ name, shutdown: "cancel" }),
      Prometheus.layer({ port: 0, host: "127.0.0.1", ...options }),
    ),
  )
  const endpoint = await runtime.runPromise(
    Effect.gen(function* () {
      const scheduler = yield* Scheduler.Scheduler
      yield* scheduler.schedule({
        id: "heartbeat",
        schedule: Schedule.fixedRate("100 millis"),
        job: Effect.void,
      })
      return yield* Prometheus.Endpoint
    }),
  )
  return { runtime, endpoint }
}

const { poll } = RealPrometheus

describe("Prometheus.layer", () => {
  it("serves every scheduler series in the text format, labelled with the scheduler", async () => {
    const { runtime, endpoint } = await startScheduler("text-format")
    try {
      expect(endpoint.url).toBe(`http://127.0.0.1:${endpoint.port}/metrics`)
      const body = await poll("a succeeded run", 30_000, async () => {
        const res = await fetch(endpoint.url)
        expect(res.status).toBe(200)
        expect(res.headers.get("content-type")).toContain("text/plain; version=0.0.4")
        const text = await res.text()
        const runs =
          /^tickwork_runs_total\{scheduler="text-format",handler="default",outcome="succeeded"\} (\d+)$/m
        const count = Number(runs.exec(text)?.[1] ?? 0)
        return count >= 2 ? text : undefined
      })
      expect(body).toContain("# TYPE tickwork_runs_total counter")
      expect(body).toContain("# TYPE tickwork_run_lateness_seconds histogram")
      expect(body).toMatch(
        /^tickwork_run_lateness_seconds_bucket\{scheduler="text-format",handler="default",le="0.01"\} \d+$/m,
      )
      expect(body).toMatch(
        /^tickwork_run_lateness_seconds_bucket\{scheduler="text-format",handler="default",le="\+Inf"\} \d+$/m,
      )
      expect(body).toMatch(/^tickwork_tasks_pending\{scheduler="text-format"\} [01]$/m)
      // Tasks by state: the one recurring task is scheduled or running.
      expect(body).toMatch(/^tickwork_tasks\{scheduler="text-format",state="done"\} 0$/m)
      expect((await fetch(new URL("/other", endpoint.url))).status).toBe(404)
    } finally {
      await runtime.dispose()
    }
    // The server closed with the layer.
    await expect(fetch(endpoint.url)).rejects.toThrow()
  }, 60_000)

  it("takes a path and a prefix", async () => {
    const { runtime, endpoint } = await startScheduler("prefixed", {
      path: "/scrape",
      prefix: "app",
    })
    try {
      expect(endpoint.url).toBe(`http://127.0.0.1:${endpoint.port}/scrape`)
      const text = await poll("the prefixed series", 30_000, async () => {
        const body = await (await fetch(endpoint.url)).text()
        return body.includes('app_tickwork_runs_total{scheduler="prefixed"') ? body : undefined
      })
      expect(text).not.toMatch(/^tickwork_/m)
    } finally {
      await runtime.dispose()
    }
  }, 60_000)

  it("bound beyond loopback without hosts, serves a scrape by any name", async () => {
    const { runtime, endpoint } = await startScheduler("any-name", { host: "0.0.0.0" })
    try {
      const served = await poll("a scrape by a service name", 30_000, async () => {
        const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = request(
            {
              host: "127.0.0.1",
              port: endpoint.port,
              path: "/metrics",
              headers: { host: `tickwork-metrics.svc:${endpoint.port}` },
            },
            (res) => {
              let body = ""
              res.on("data", (chunk) => {
                body += chunk
              })
              res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
            },
          )
          req.on("error", reject)
          req.end()
        })
        return r.body.includes('tickwork_tasks_pending{scheduler="any-name"}') ? r : undefined
      })
      expect(served.status).toBe(200)
    } finally {
      await runtime.dispose()
    }
  }, 60_000)

  it("answers only a Host it serves: a DNS-rebinding page reads nothing (421)", async () => {
    const { runtime, endpoint } = await startScheduler("rebinding", { hosts: ["App-Host"] })
    try {
      const ask = (host: string, path = "/metrics") =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = request(
            { host: "127.0.0.1", port: endpoint.port, path, headers: { host } },
            (res) => {
              let body = ""
              res.on("data", (chunk) => {
                body += chunk
              })
              res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
            },
          )
          req.on("error", reject)
          req.end()
        })
      const port = endpoint.port
      for (const host of [`evil.example:${port}`, "127.0.0.1", `127.0.0.1:${port + 1}`]) {
        const refused = await ask(host)
        expect([host, refused.status]).toEqual([host, 421])
        expect(refused.body).not.toContain("tickwork_")
      }
      expect((await ask(`evil.example:${port}`, "/other")).status).toBe(421)
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `app-host:${port}`]) {
        const served = await poll(`a scrape as ${host}`, 30_000, async () => {
          const r = await ask(host)
          return r.body.includes('tickwork_tasks_pending{scheduler="rebinding"}') ? r : undefined
        })
        expect(served.status).toBe(200)
      }
    } finally {
      await runtime.dispose()
    }
  }, 60_000)

  it("fails with ServeError when the port is taken", async () => {
    const { runtime, endpoint } = await startScheduler("first")
    try {
      const exit = await Effect.runPromiseExit(
        Effect.scoped(Layer.build(Prometheus.layer({ port: endpoint.port, host: "127.0.0.1" }))),
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        const error = Cause.findErrorOption(exit.cause)
        expect(Option.map(error, (e) => e._tag)).toEqual(Option.some("ServeError"))
      }
    } finally {
      await runtime.dispose()
    }
  }, 60_000)
})

describe("a real Prometheus", () => {
  let prometheus: RealPrometheus.Server | undefined
  let scheduler: Awaited<ReturnType<typeof startScheduler>> | undefined
  let other: Awaited<ReturnType<typeof startScheduler>> | undefined

  beforeAll(async () => {
    scheduler = await startScheduler("scraped")
    // A second scheduler in the process: its series go out through the same endpoint.
    other = await startScheduler("other")
    prometheus = await RealPrometheus.start({
      targets: [`127.0.0.1:${scheduler.endpoint.port}`],
    })
  }, 180_000)

  afterAll(async () => {
    await prometheus?.stop()
    await scheduler?.runtime.dispose()
    await other?.runtime.dispose()
  }, 60_000)

  const query = (promql: string) => {
    if (prometheus === undefined) throw new Error("Prometheus did not start")
    return prometheus.query(promql)
  }

  it("scrapes the run counter and the lateness histogram with the scheduler label", async () => {
    const runs = await poll("a scraped run count", 120_000, async () => {
      const result = await query('tickwork_runs_total{scheduler="scraped",outcome="succeeded"}')
      return result.length > 0 && Number(result[0]?.value[1]) > 0 ? result : undefined
    })
    expect(runs.map((s) => s.metric)).toEqual([
      {
        __name__: "tickwork_runs_total",
        handler: "default",
        instance: `127.0.0.1:${scheduler?.endpoint.port}`,
        job: "tickwork",
        outcome: "succeeded",
        scheduler: "scraped",
      },
    ])
    // The process's other scheduler is a series of its own, scraped from the same endpoint.
    const otherRuns = await poll("the other scheduler's runs", 120_000, async () => {
      const result = await query(
        `tickwork_runs_total{instance="127.0.0.1:${scheduler?.endpoint.port}",scheduler="other"}`,
      )
      return result.length > 0 ? result : undefined
    })
    expect(otherRuns.map((s) => s.metric.outcome)).toEqual(["succeeded"])

    const buckets = await query('tickwork_run_lateness_seconds_bucket{scheduler="scraped"}')
    const byLe = new Map(buckets.map((s) => [s.metric.le, Number(s.value[1])]))
    expect([...byLe.keys()]).toEqual(expect.arrayContaining(["0.001", "0.1", "1", "300", "+Inf"]))
    expect(byLe.get("+Inf")).toBeGreaterThan(0)
    // Cumulative buckets: the count never decreases as `le` grows.
    const bound = (le: string | undefined) => (le === "+Inf" ? Infinity : Number(le))
    const ordered = [...byLe].sort(([a], [b]) => bound(a) - bound(b)).map(([, v]) => v)
    expect(ordered).toEqual([...ordered].sort((a, b) => a - b))

    const up = await query('up{job="tickwork"}')
    expect(up.map((s) => s.value[1])).toEqual(["1"])
  }, 180_000)
})
