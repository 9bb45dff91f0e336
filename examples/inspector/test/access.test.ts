import { request as httpRequest } from "node:http"
import { createServer, type Server, connect as tcpConnect } from "node:net"
import * as Chromium from "@tickwork/testkit/Chromium"
import { Effect, Exit, Scope } from "effect"
import type { Page } from "playwright-core"
import { afterAll, describe, expect, it } from "vitest"
import { WebSocket } from "ws"
import * as LiveView from "../src/liveView.ts"

interface Started {
  readonly view: LiveView.LiveView
  readonly port: number
  readonly close: () => Promise<void>
}

const start = async (options: Partial<LiveView.LiveViewOptions> = {}): Promise<Started> => {
  const scope = await Effect.runPromise(Scope.make())
  const view = await Effect.runPromise(
    LiveView.make({ port: 0, ...options }).pipe(Scope.provide(scope)),
  )
  return {
    view,
    port: Number(new URL(view.url).port),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void)),
  }
}

/** A raw HTTP GET with the headers given as is (Node's client sends no Host of its own then). */
const get = (port: number, path: string, headers: Record<string, string>) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, headers, setHost: false }, (res) => {
      let body = ""
      res.on("data", (d) => {
        body += String(d)
      })
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end()
  })

/**
 * Opens a WebSocket to the view with the given headers and query; resolves with the HTTP status
 * of a refused upgrade (and the frames received: none), or with the first frame of an accepted
 * one.
 */
const connect = (
  port: number,
  options: { origin?: string; host?: string; query?: string },
): Promise<{ status: number | undefined; frames: Array<string> }> =>
  new Promise((resolve, reject) => {
    const frames: Array<string> = []
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws${options.query ?? ""}`, {
      ...(options.origin === undefined ? {} : { origin: options.origin }),
      ...(options.host === undefined ? {} : { headers: { host: options.host } }),
    })
    ws.on("message", (data) => {
      frames.push(String(data))
      ws.close()
      resolve({ status: 101, frames })
    })
    ws.on("unexpected-response", (_req, res) => {
      // Frames cannot follow a non-101 answer; wait for the socket to close to be sure. The
      // server closes it after its answer, which may reach this end as a reset: that is the
      // close too, not an error of the test.
      res.resume()
      res.on("error", () => resolve({ status: res.statusCode, frames }))
      res.on("close", () => resolve({ status: res.statusCode, frames }))
    })
    ws.on("error", (error) => {
      if (frames.length === 0) reject(error)
    })
  })

const waitUntil = (page: Page, expression: string) => Chromium.waitUntil(page, expression, 30_000)

const stops: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const stop of stops) await stop()
})

describe("the live view on loopback", () => {
  it("survives a client that resets its connection in the middle of a refused upgrade", async () => {
    const { port, close } = await start()
    stops.push(close)
    const uncaught: Array<unknown> = []
    const onUncaught = (error: unknown) => uncaught.push(error)
    process.on("uncaughtException", onUncaught)
    try {
      for (let i = 0; i < 20; i++) {
        await new Promise<void>((resolve) => {
          const socket = tcpConnect(port, "127.0.0.1", () => {
            socket.write(
              "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
                "Origin: http://evil.example\r\nSec-WebSocket-Version: 13\r\n" +
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
            )
            // RST, not FIN: the server's reply then meets a reset connection.
            socket.resetAndDestroy()
            resolve()
          })
          socket.on("error", () => resolve())
        })
      }
      // The server still answers, and no reset escaped as an uncaught error.
      expect((await get(port, "/", { host: `127.0.0.1:${port}` })).status).toBe(200)
      expect(uncaught).toEqual([])
    } finally {
      process.off("uncaughtException", onUncaught)
    }
  })

  it("answers a foreign Host with 421 and none of the page, on HTTP and on the upgrade", async () => {
    const { port, close } = await start()
    stops.push(close)
    const own = await get(port, "/", { host: `127.0.0.1:${port}` })
    expect(own.status).toBe(200)
    expect(own.body).toContain("<script>")
    const rebound = await get(port, "/", { host: `attacker.example:${port}` })
    expect(rebound.status).toBe(421)
    expect(rebound.body).not.toContain("<script>")
    // No Host at all: Node's server refuses it (400) before the handler runs.
    expect((await get(port, "/", {})).status).toBe(400)
    const ws = await connect(port, { host: `attacker.example:${port}` })
    expect(ws).toEqual({ status: 421, frames: [] })
  })

  it("refuses a WebSocket with a foreign Origin before sending any frame", async () => {
    const { port, close } = await start()
    stops.push(close)
    expect(await connect(port, { origin: "http://attacker.example" })).toEqual({
      status: 403,
      frames: [],
    })
    // Another port of this machine is another origin too.
    expect(await connect(port, { origin: `http://127.0.0.1:${port + 1}` })).toEqual({
      status: 403,
      frames: [],
    })
    const own = await connect(port, { origin: `http://localhost:${port}` })
    expect(own.status).toBe(101)
    expect(JSON.parse(own.frames[0] ?? "{}").t).toBe("init")
  })

  it("sends the page with a policy that runs its own script only and forbids framing", async () => {
    const { port, close } = await start()
    stops.push(close)
    const res = await new Promise<Record<string, unknown>>((resolve, reject) => {
      httpRequest({ host: "127.0.0.1", port, path: "/" }, (r) => {
        r.on("error", reject)
        r.resume()
        resolve(r.headers)
      })
        .on("error", reject)
        .end()
    })
    expect(String(res["content-security-policy"])).toMatch(
      /script-src 'sha256-[A-Za-z0-9+/=]+'; .*frame-ancestors 'none'/,
    )
    expect(res["x-frame-options"]).toBe("DENY")
  })
})

describe("the live view beyond loopback", () => {
  it("needs the token on the WebSocket, compared exactly", async () => {
    const { view, port, close } = await start({ host: "0.0.0.0" })
    stops.push(close)
    expect(view.token).toMatch(/^[A-Za-z0-9_-]{32}$/)
    const origin = `http://127.0.0.1:${port}`
    expect(await connect(port, { origin })).toEqual({ status: 401, frames: [] })
    expect(await connect(port, { origin, query: "?token=" })).toEqual({ status: 401, frames: [] })
    expect(await connect(port, { origin, query: `?token=${view.token}x` })).toEqual({
      status: 403,
      frames: [],
    })
    const ok = await connect(port, { origin, query: `?token=${view.token}` })
    expect(ok.status).toBe(101)
    expect(JSON.parse(ok.frames[0] ?? "{}").t).toBe("init")
  })

  it("takes a token given, and refuses a short one naming the field", async () => {
    const given = "a-token-of-twenty-chars"
    const { view, port, close } = await start({ host: "0.0.0.0", token: given })
    stops.push(close)
    expect(view.token).toBe(given)
    const origin = `http://127.0.0.1:${port}`
    expect((await connect(port, { origin, query: `?token=${given}` })).status).toBe(101)
    const exit = await Effect.runPromiseExit(
      Effect.scoped(LiveView.make({ port: 0, host: "0.0.0.0", token: "short" })),
    )
    expect(Exit.isFailure(exit) && String(exit.cause)).toContain("token must be at least 16")
  })
})

describe("the live view in headless Chromium", () => {
  let browser: Chromium.Browser | undefined
  let other: Server | undefined

  afterAll(async () => {
    await browser?.close()
    other?.close()
  })

  it("shows the operator's tab live, and gives another site's page and a rebound name nothing", async () => {
    const { view, port, close } = await start({ host: "0.0.0.0" })
    stops.push(close)
    // A DNS-rebinding attacker's name, resolved to the live view's machine.
    browser = await Chromium.launch({ args: ["--host-resolver-rules=MAP rebind.test 127.0.0.1"] })
    const page = browser.page

    // The operator's tab: the printed URL with its #token= fragment connects, and the token
    // leaves the address bar.
    await page.goto(`${view.url}#token=${view.token}`)
    await waitUntil(page, `document.getElementById("conn-text").textContent === "live"`)
    expect(new URL(page.url()).hash).toBe("")
    // Reloaded without the fragment, the tab still has its token.
    await page.reload()
    await waitUntil(page, `document.getElementById("conn-text").textContent === "live"`)

    // A rebound name: the page's request carries Host rebind.test, and gets 421.
    const rebound = await page.goto(`http://rebind.test:${port}/`)
    expect(rebound?.status()).toBe(421)
    expect(await page.content()).not.toContain("conn-text")

    // Another site's page (another origin: a server of its own) opens a WebSocket to the live
    // view, even with the token: refused, not one message.
    other = createServer((socket) => {
      // It answers without reading the request, so the browser may see the close as a reset
      // and reset in turn: that must not become an uncaught error of the test process.
      socket.on("error", () => socket.destroy())
      socket.end(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nconnection: close\r\n\r\n<!doctype html><title>other</title>",
      )
    })
    await new Promise<void>((r) => other?.listen(0, "127.0.0.1", () => r()))
    const otherPort = (other.address() as { port: number }).port
    await page.goto(`http://127.0.0.1:${otherPort}/`)
    const result = await page.evaluate(
      `new Promise((resolve) => {
        const ws = new WebSocket("ws://127.0.0.1:${port}/ws?token=${view.token}");
        let messages = 0;
        ws.onmessage = () => { messages++ };
        ws.onclose = (e) => resolve({ messages, opened: e.wasClean, code: e.code });
      })`,
    )
    expect(result).toMatchObject({ messages: 0 })
  }, 120_000)
})
