/**
 * Traces, metrics and logs of a scheduler exported with effect's OTLP layers
 * (`Otlp.layerJson` from `effect/observability`, OTLP/HTTP with JSON bodies) to a receiver started
 * here: a node:http server on 127.0.0.1 that records every body posted to it. The layers export
 * what is left when their scope closes, so the test reads the bodies after the program ends.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Deferred, Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { Otlp } from "effect/observability"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Schedule, Scheduler } from "../src/index.ts"

// The OTLP/JSON shapes the assertions read (a subset of the protocol's).
type AnyValue = { stringValue?: string; intValue?: number | string; doubleValue?: number }
type KeyValue = { key: string; value: AnyValue }
type Span = {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  attributes: Array<KeyValue>
  links: Array<{ traceId: string; spanId: string }>
  status?: { code?: number }
}
type DataPoint = {
  attributes: Array<KeyValue>
  asDouble?: number
  asInt?: number | string
  count?: number | string
  bucketCounts?: Array<number | string>
  explicitBounds?: Array<number>
}
type OtlpMetric = {
  name: string
  sum?: { dataPoints: Array<DataPoint>; isMonotonic?: boolean }
  histogram?: { dataPoints: Array<DataPoint> }
  gauge?: { dataPoints: Array<DataPoint> }
}
type LogRecord = {
  severityText?: string
  body?: AnyValue
  attributes: Array<KeyValue>
  traceId?: string
  spanId?: string
}
type Resource = { attributes: Array<KeyValue> }
type Received = { path: string; contentType: string | undefined; body: unknown }

const received: Array<Received> = []
let server: Server
let baseUrl = ""

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      received.push({
        path: req.url ?? "",
        contentType: req.headers["content-type"],
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")),
      })
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
})

const attributes = (kvs: Array<KeyValue>): Record<string, unknown> =>
  Object.fromEntries(
    kvs.map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue === undefined ? value.doubleValue : Number(value.intValue)),
    ]),
  )
const bodies = <A>(path: string) => received.filter((r) => r.path === path).map((r) => r.body as A)

describe("OTLP export", () => {
  it("sends each run as a root span linked to the scheduling span, with the metrics and logs", async () => {
    const otlp = Otlp.layerJson({
      baseUrl,
      resource: { serviceName: "billing", serviceVersion: "1.2.3" },
    }).pipe(Layer.provide(FetchHttpClient.layer))

    const program = Effect.gen(function* () {
      const scheduler = yield* Scheduler.Scheduler
      const done = yield* Deferred.make<void>()
      // The first attempt fails, the retry succeeds and logs.
      yield* scheduler
        .schedule({
          id: "invoice",
          schedule: Schedule.once("10 millis"),
          retry: { maxRetries: 1, base: "10 millis" },
          job: (run) =>
            run.attempt === 1
              ? Effect.fail("ledger locked")
              : Effect.log("invoice sent").pipe(Effect.andThen(Deferred.succeed(done, undefined))),
        })
        .pipe(Effect.withSpan("checkout", { attributes: { "http.route": "/checkout" } }))
      yield* Deferred.await(done).pipe(Effect.timeout("30 seconds"))
    })
    // The scheduler is built on the OTLP tracer (spans "auto" turn on), and closes before it.
    await Effect.runPromise(
      program.pipe(
        Effect.provide(Scheduler.layer({ name: "billing" }).pipe(Layer.provideMerge(otlp))),
      ),
    )

    for (const r of received) expect(r.contentType).toBe("application/json")

    // ---- traces
    const resourceSpans = bodies<{
      resourceSpans: Array<{ resource: Resource; scopeSpans: Array<{ spans: Array<Span> }> }>
    }>("/v1/traces").flatMap((b) => b.resourceSpans)
    expect(attributes(resourceSpans[0]?.resource.attributes ?? [])).toMatchObject({
      "service.name": "billing",
      "service.version": "1.2.3",
    })
    const spans = resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans))
    const checkout = spans.filter((s) => s.name === "checkout")
    const runs = spans.filter((s) => s.name === "tickwork.run")
    expect(checkout).toHaveLength(1)
    expect(runs).toHaveLength(2)
    const scheduling = checkout[0] as Span
    for (const run of runs) {
      // A root span: no parent, a trace of its own, a link back to where it was scheduled.
      expect(run.parentSpanId ?? "").toBe("")
      expect(run.traceId).not.toBe(scheduling.traceId)
      expect(run.links.map((l) => [l.traceId, l.spanId])).toEqual([
        [scheduling.traceId, scheduling.spanId],
      ])
    }
    expect(runs[0]?.traceId).not.toBe(runs[1]?.traceId)
    const [first, retry] = runs.map((s) => attributes(s.attributes))
    expect(first).toMatchObject({ "tickwork.task": "invoice", "tickwork.attempt": 1 })
    expect(retry).toMatchObject({ "tickwork.task": "invoice", "tickwork.attempt": 2 })
    for (const a of [first, retry]) {
      expect(Object.keys(a ?? {}).sort()).toEqual([
        "tickwork.attempt",
        "tickwork.due",
        "tickwork.lateness_ms",
        "tickwork.run_number",
        "tickwork.slot",
        "tickwork.task",
      ])
      expect(a?.["tickwork.lateness_ms"]).toBeGreaterThanOrEqual(0)
    }
    // Each run has the next run number; a retry keeps its slot and is due a backoff after the
    // failure.
    expect([first?.["tickwork.run_number"], retry?.["tickwork.run_number"]]).toEqual([1, 2])
    expect(retry?.["tickwork.slot"]).toBe(first?.["tickwork.slot"])
    expect(retry?.["tickwork.due"] as number).toBeGreaterThanOrEqual(
      (first?.["tickwork.due"] as number) + 10,
    )
    // OTLP status codes: 2 = error for the failed attempt, 1 = ok for the retry.
    expect(runs.map((s) => s.status?.code)).toEqual([2, 1])

    // ---- metrics (the last export holds the totals: cumulative temporality)
    const exported = bodies<{
      resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<OtlpMetric> }> }>
    }>("/v1/metrics").flatMap((b) =>
      b.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics)),
    )
    const last = (name: string) => exported.filter((m) => m.name === name).at(-1)
    const billing = (points: Array<DataPoint> | undefined) =>
      (points ?? []).filter((p) => attributes(p.attributes).scheduler === "billing")
    const runsTotal = last("tickwork_runs_total")
    expect(runsTotal?.sum?.isMonotonic).toBe(true)
    expect(
      billing(runsTotal?.sum?.dataPoints)
        .map((p) => [attributes(p.attributes).outcome, Number(p.asDouble ?? p.asInt)])
        .sort(),
    ).toEqual([
      ["failed", 1],
      ["succeeded", 1],
    ])
    const retries = billing(last("tickwork_retries_total")?.sum?.dataPoints)
    expect(retries.map((p) => Number(p.asDouble ?? p.asInt))).toEqual([1])
    const lateness = billing(last("tickwork_run_lateness_seconds")?.histogram?.dataPoints)
    expect(lateness).toHaveLength(1)
    expect(Number(lateness[0]?.count)).toBe(2)
    expect(lateness[0]?.explicitBounds).toEqual([
      0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 300,
    ])
    const duration = billing(last("tickwork_run_duration_seconds")?.histogram?.dataPoints)
    expect(Number(duration[0]?.count)).toBe(2)

    // ---- logs: the run's own lines and the failure warning, inside their run spans
    const logs = bodies<{
      resourceLogs: Array<{ scopeLogs: Array<{ logRecords: Array<LogRecord> }> }>
    }>("/v1/logs").flatMap((b) =>
      b.resourceLogs.flatMap((r) => r.scopeLogs.flatMap((s) => s.logRecords)),
    )
    const sent = logs.find((l) => l.body?.stringValue === "invoice sent")
    expect(sent?.severityText).toBe("Info")
    expect(attributes(sent?.attributes ?? [])).toMatchObject({
      "tickwork.task": "invoice",
      "tickwork.attempt": 2,
    })
    expect([sent?.traceId, sent?.spanId]).toEqual([runs[1]?.traceId, runs[1]?.spanId])
    const failed = logs.find((l) => l.body?.stringValue?.startsWith("tickwork run failed"))
    expect(failed?.severityText).toBe("Warn")
    expect([failed?.traceId, failed?.spanId]).toEqual([runs[0]?.traceId, runs[0]?.spanId])
  }, 60_000)
})
