/**
 * A Prometheus scrape endpoint: an HTTP server serving every metric in the registry — the
 * schedulers' `tickwork_*` series with their `scheduler` label, and anything else the
 * application records — in the Prometheus text format at `/metrics`. It is effect's
 * `PrometheusMetrics` on `@effect/platform-node`'s HTTP server (an optional peer dependency of
 * this package: install it to use this layer).
 *
 * **Example** (A scheduler with a scrape endpoint on port 9464)
 *
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { Prometheus, Schedule, Scheduler } from "@tickwork/runtime"
 *
 * const program = Effect.gen(function* () {
 *   const scheduler = yield* Scheduler.Scheduler
 *   yield* scheduler.schedule({ schedule: Schedule.fixedRate("10 seconds"), job: Effect.void })
 *   return yield* Effect.never
 * })
 *
 * NodeRuntime.runMain(
 *   program.pipe(
 *     Effect.provide(
 *       Layer.merge(Scheduler.layer({ name: "mail" }), Prometheus.layer({ port: 9464 })),
 *     ),
 *   ),
 * )
 * ```
 *
 * A Prometheus scrape config for it:
 *
 * ```yaml
 * scrape_configs:
 *   - job_name: tickwork
 *     static_configs:
 *       - targets: ["app-host:9464"]
 * ```
 *
 * An application that already runs an effect `HttpRouter` adds the route to it instead:
 * `PrometheusMetrics.layerHttp()` from `effect/observability`.
 *
 * @since 0.1.0
 */
import { createServer } from "node:http"
import { Context, Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import type { ServeError } from "effect/http/HttpServerError"
import { PrometheusMetrics } from "effect/observability"

/**
 * Where the endpoint listens, and how it names the metrics.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** TCP port; 0 picks a free one (read it from {@link Endpoint}). Default 9464. */
  readonly port?: number
  /** Interface to listen on. Default: every interface, as Node's `listen` does. */
  readonly host?: string
  /** Path of the endpoint. Default `/metrics`. */
  readonly path?: `/${string}`
  /** A prefix joined to every metric name with `_` (`myapp` → `myapp_tickwork_runs_total`). */
  readonly prefix?: string
}

/**
 * The running endpoint: its URL and port (the bound one when `port` was 0).
 *
 * @category services
 * @since 0.1.0
 */
export class Endpoint extends Context.Service<
  Endpoint,
  { readonly url: string; readonly port: number }
>()("@tickwork/runtime/Prometheus/Endpoint") {}

/** The default port: the one OpenTelemetry's Prometheus exporter uses. */
const defaultPort = 9464

/**
 * Serves the metric registry of the layer's context (the default one unless you provide
 * another) for Prometheus to scrape, until the layer's scope closes. Fails with `ServeError`
 * when the port cannot be bound. Requests are not logged (a scrape every few seconds would
 * flood the logs).
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options = {}): Layer.Layer<Endpoint, ServeError> => {
  const path = options.path ?? "/metrics"
  const listen = {
    port: options.port ?? defaultPort,
    ...(options.host === undefined ? {} : { host: options.host }),
  }
  return Layer.unwrap(
    Effect.map(loadNodeHttpServer, (NodeHttpServer) => {
      const routes = HttpRouter.serve(
        PrometheusMetrics.layerHttp({ path, prefix: options.prefix }),
        { disableLogger: true, disableListenLog: true },
      )
      const endpoint = Layer.effect(
        Endpoint,
        Effect.gen(function* () {
          const { address } = yield* HttpServer.HttpServer
          return {
            url: `${HttpServer.formatAddress(address)}${path}`,
            port: address._tag === "UnixPathAddress" ? 0 : address.port,
          }
        }),
      )
      return Layer.merge(routes, endpoint).pipe(
        Layer.provide(NodeHttpServer.layer(() => createServer(), listen)),
      )
    }),
  )
}

/**
 * `@effect/platform-node` is an optional peer dependency, loaded only when the layer is built,
 * so applications that do not serve metrics need not install it.
 */
const loadNodeHttpServer = Effect.tryPromise({
  try: () => import("@effect/platform-node/NodeHttpServer"),
  catch: (cause) =>
    new Error(
      'Prometheus.layer needs the "@effect/platform-node" package (4.x): install it beside @tickwork/runtime',
      { cause },
    ),
}).pipe(Effect.orDie)
