// A real redis-server for the suites: started on 127.0.0.1 on a free port, without
// persistence, stopped (or killed and restarted) by the test. Where redis-server is not
// installed the suites that need it skip with a message; in CI (CI=true) that is an
// error instead, since .ci/run installs it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createConnection, createServer } from 'node:net'

export const redisInstalled = spawnSync('redis-server', ['--version']).error === undefined

if (!redisInstalled) {
  if (process.env.CI) throw new Error('redis-server is not installed, and CI must run the Redis suites (.ci/run installs it)')
  console.warn('redis-server is not installed: skipping the suites that need a real Redis (apt-get install redis-server)')
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection({ port, host: '127.0.0.1' }, () => {
      c.write('PING\r\n')
    })
    c.once('data', (d) => {
      c.destroy()
      resolve(d.toString().startsWith('+PONG'))
    })
    c.once('error', () => resolve(false))
  })
}

export class RedisServer {
  private proc: ChildProcess | null = null
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  static async start(port?: number): Promise<RedisServer> {
    const server = new RedisServer(port ?? (await freePort()))
    await server.up()
    return server
  }

  /** Starts (again) on this server's port and waits until it answers PING. */
  async up(): Promise<void> {
    const proc = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    })
    this.proc = proc
    const deadline = Date.now() + 10_000
    while (!(await answers(this.port))) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode} on port ${this.port}`)
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${this.port} within 10 s`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  /** Sends one command (as RESP) and resolves with the first line of the answer. */
  command(...args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const c = createConnection({ port: this.port, host: '127.0.0.1' }, () => {
        c.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`)
      })
      c.once('data', (d) => {
        c.destroy()
        resolve(d.toString().split('\r\n')[0])
      })
      c.once('error', reject)
    })
  }

  /** SIGKILL, as a crash; resolves once the process is gone. */
  async kill(): Promise<void> {
    const proc = this.proc
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return
    const gone = new Promise((r) => proc.once('exit', r))
    proc.kill('SIGKILL')
    await gone
    this.proc = null
  }

  stop(): Promise<void> {
    return this.kill()
  }
}
