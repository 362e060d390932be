// A real PostgreSQL for the benchmarks and the test suites: the distribution's server
// (initdb and pg_ctl in a temporary directory, password authentication, 127.0.0.1 on a
// free port, fsync off), run as the `postgres` user when the caller is root.
'use strict'
const { execFileSync } = require('node:child_process')
const { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } = require('node:fs')
const { createServer } = require('node:net')
const { tmpdir } = require('node:os')
const { join } = require('node:path')

const PASSWORD = 'context-engine-test'

/** The directory of the newest installed server's programs (Debian's layout, or on PATH). */
function binDir() {
  const root = '/usr/lib/postgresql'
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a))
    if (versions.length > 0) return join(root, versions[0], 'bin')
  }
  try {
    const initdb = execFileSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).trim()
    return initdb ? join(initdb, '..') : null
  } catch {
    return null
  }
}

const bin = binDir()
const asPostgres = typeof process.getuid === 'function' && process.getuid() === 0

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

class PgServer {
  constructor(port, dir) {
    this.port = port
    this.dir = dir
    this.databases = 0
  }

  /** `database` on this server, as a URL with the password. */
  url(database = 'postgres') {
    return `postgres://postgres:${PASSWORD}@127.0.0.1:${this.port}/${database}`
  }

  static async start() {
    if (bin === null) throw new Error('PostgreSQL is not installed (apt-get install postgresql)')
    const dir = mkdtempSync(join(tmpdir(), 'context-engine-pg-'))
    const pw = join(dir, 'pw')
    writeFileSync(pw, PASSWORD)
    if (asPostgres) execFileSync('chown', ['-R', 'postgres:postgres', dir])
    const server = new PgServer(await freePort(), dir)
    server.tool('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=scram-sha-256', '--pwfile', pw, '--no-sync', '-E', 'UTF8', '--locale=C'])
    server.up()
    return server
  }

  /** Starts (again) on this server's port and waits until it accepts connections. */
  up() {
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`
    this.tool('pg_ctl', ['-D', join(this.dir, 'data'), '-l', join(this.dir, 'log'), '-o', opts, '-w', '-t', '30', 'start'])
  }

  /** Stops at once, as a crash would (no checkpoint). */
  kill() {
    this.tool('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop'])
  }

  /** A new empty database on this server: its URL. */
  database() {
    const name = `db_${++this.databases}`
    this.sql(`CREATE DATABASE ${name}`)
    return this.url(name)
  }

  /** Runs SQL through psql as the superuser; its output. */
  sql(text, database = 'postgres') {
    return this.tool('psql', ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '-d', database, '-At', '-c', text], { PGPASSWORD: PASSWORD })
  }

  stop() {
    try {
      this.kill()
    } catch {
      // Gone already.
    }
    rmSync(this.dir, { recursive: true, force: true })
  }

  tool(name, args, env = {}) {
    const exe = join(bin ?? '', name)
    const [cmd, argv] = asPostgres ? ['runuser', ['-u', 'postgres', '--', exe, ...args]] : [exe, args]
    return execFileSync(cmd, argv, { encoding: 'utf8', env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  }
}

module.exports = { PgServer, pgInstalled: bin !== null }
