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
 * Bound to loopback, or given `hosts`, every request's `Host` must name an address the server
 * serves (`PageAccess.allowedHosts`: the bound address; on every interface, each interface's
 * address, this machine's name and `localhost`) or one of `hosts`, else it is answered 421 with
 * nothing read: a DNS-rebinding page, whose requests carry its own name, cannot read the
 * metrics. Bound beyond loopback without `hosts` (the default, every interface), any `Host` is
 * served, so a scrape target written as a DNS or service name keeps working; list those names
 * in `hosts` (`hosts: ["app-host"]` for the config above) to refuse every other name.
 *
 * An application that already runs an effect `HttpRouter` adds the route to it instead:
 * `PrometheusMetrics.layerHttp()` from `effect/observability` (its own router's checks apply).
 *
 * @since 0.1.0
 */
import { createServer } from "node:http"
import { Context, Effect, Layer } from "effect"
import { HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { ServeError } from "effect/http/HttpServerError"
import { PrometheusMetrics } from "effect/observability"
import * as PageAccess from "./PageAccess.ts"

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
  /**
   * More names a scrape may send as its `Host`, beyond the addresses served: `app-host` (then
   * `app-host:<port>` is accepted) or `app-host:80` (exactly that). Case is ignored.
   */
  readonly hosts?: ReadonlyArray<string>
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
 * The `Host` values a scrape may carry: the served addresses (`PageAccess.allowedHosts`) and
 * `extra`, each with `:port` unless it names a port.
 */
const hostsFor = (
  host: string,
  port: number,
  extra: ReadonlyArray<string> = [],
): ReadonlySet<string> => {
  const hosts = new Set(PageAccess.allowedHosts(host, port))
  for (const name of extra) {
    const lower = name.toLowerCase()
    hosts.add(
      /^(\[[^\]]*\]|[^:]*):\d+$/.test(lower) ? lower : `${PageAccess.bracket(lower)}:${port}`,
    )
  }
  return hosts
}

/**
 * Serves the metric registry of the layer's context (the default one unless you provide
 * another) for Prometheus to scrape, until the layer's scope closes. Fails with `ServeError`
 * when the port cannot be bound. Requests are not logged (a scrape every few seconds would
 * flood the logs). A request whose `Host` is not served (see the module's doc) is answered 421.
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
  const formatOptions = options.prefix === undefined ? {} : { prefix: options.prefix }
  return Layer.unwrap(
    Effect.map(loadNodeHttpServer, (NodeHttpServer) =>
      Layer.effect(
        Endpoint,
        Effect.gen(function* () {
          const server = yield* HttpServer.HttpServer
          const { address } = server
          const port = address._tag === "UnixPathAddress" ? 0 : address.port
          // Node's listen without a host takes every interface.
          const bound = options.host ?? "::"
          const hosts = hostsFor(bound, port, options.hosts)
          // Off only where the server is reachable beyond this machine anyway and no names were
          // given: refusing unknown names there would break scrapes by service name.
          const checkHost = options.hosts !== undefined || PageAccess.isLoopback(bound)
          const app = Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            // Checked first: a rebound page must learn nothing, not even which paths exist.
            const hostHeader = (request.headers.host ?? "").toLowerCase()
            if (checkHost && !PageAccess.hostAllowed(hosts, hostHeader)) {
              return HttpServerResponse.text(`unknown Host ${JSON.stringify(hostHeader)}\n`, {
                status: 421,
              })
            }
            if (new URL(request.url, "http://localhost").pathname !== path) {
              return HttpServerResponse.text("not found\n", { status: 404 })
            }
            if (request.method !== "GET" && request.method !== "HEAD") {
              return HttpServerResponse.text("only GET and HEAD\n", {
                status: 405,
                headers: { allow: "GET, HEAD" },
              })
            }
            return HttpServerResponse.text(yield* PrometheusMetrics.format(formatOptions), {
              contentType: "text/plain; version=0.0.4; charset=utf-8",
            })
          })
          yield* server.serve(app)
          return { url: `${HttpServer.formatAddress(address)}${path}`, port }
        }),
      ).pipe(Layer.provide(NodeHttpServer.layer(() => createServer(), listen))),
    ),
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
