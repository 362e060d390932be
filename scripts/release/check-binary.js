#!/usr/bin/env node
// Checks that a built addon is a binary for the platform its name claims, from the file's
// own header: ELF machine (Linux), Mach-O CPU type (macOS), PE machine (Windows). A build
// that silently produced a host binary under a cross target's name fails here, not on a
// user's machine.
//
//   node scripts/release/check-binary.js <file.node> <rust target triple>
'use strict'
const { openSync, readSync, closeSync } = require('node:fs')

/** What each release target's binary must be. */
const EXPECTED = {
  'x86_64-unknown-linux-gnu': { format: 'elf', machine: 0x3e, label: 'ELF x86-64' },
  'aarch64-unknown-linux-gnu': { format: 'elf', machine: 0xb7, label: 'ELF AArch64' },
  'x86_64-unknown-linux-musl': { format: 'elf', machine: 0x3e, label: 'ELF x86-64' },
  'x86_64-apple-darwin': { format: 'macho', machine: 0x01000007, label: 'Mach-O x86-64' },
  'aarch64-apple-darwin': { format: 'macho', machine: 0x0100000c, label: 'Mach-O arm64' },
  'x86_64-pc-windows-msvc': { format: 'pe', machine: 0x8664, label: 'PE x86-64' },
}

function header(file, length) {
  const fd = openSync(file, 'r')
  try {
    const buf = Buffer.alloc(length)
    const n = readSync(fd, buf, 0, length, 0)
    return buf.subarray(0, n)
  } finally {
    closeSync(fd)
  }
}

/** The binary format and machine of `file`, read from its header. */
function identify(file) {
  const h = header(file, 4096)
  if (h.length >= 20 && h[0] === 0x7f && h.toString('latin1', 1, 4) === 'ELF') {
    const little = h[5] === 1
    const machine = little ? h.readUInt16LE(18) : h.readUInt16BE(18)
    const type = little ? h.readUInt16LE(16) : h.readUInt16BE(16)
    return { format: 'elf', machine, shared: type === 3 }
  }
  if (h.length >= 12 && h.readUInt32LE(0) === 0xfeedfacf) {
    const fileType = h.readUInt32LE(12)
    return { format: 'macho', machine: h.readUInt32LE(4), shared: fileType === 0x6 || fileType === 0x8 }
  }
  if (h.length >= 64 && h.toString('latin1', 0, 2) === 'MZ') {
    const pe = h.readUInt32LE(0x3c)
    if (pe + 6 <= h.length && h.toString('latin1', pe, pe + 4) === 'PE\0\0') {
      const characteristics = h.readUInt16LE(pe + 22)
      return { format: 'pe', machine: h.readUInt16LE(pe + 4), shared: (characteristics & 0x2000) !== 0 }
    }
  }
  return { format: 'unknown', machine: 0, shared: false }
}

/** Null when `file` is a shared library for `target`, else what is wrong. */
function check(file, target) {
  const want = EXPECTED[target]
  if (!want) return `no expectation for target ${target} (known: ${Object.keys(EXPECTED).join(', ')})`
  const got = identify(file)
  if (got.format !== want.format || got.machine !== want.machine) {
    return `${file} is ${got.format} machine 0x${got.machine.toString(16)}, expected ${want.label}`
  }
  if (!got.shared) return `${file} is ${want.label} but not a shared library`
  return null
}

module.exports = { check, identify, EXPECTED }

if (require.main === module) {
  const [file, target] = process.argv.slice(2)
  if (!file || !target) {
    console.error('usage: check-binary.js <file.node> <rust target triple>')
    process.exit(2)
  }
  const problem = check(file, target)
  if (problem) {
    console.error(`check-binary: ${problem}`)
    process.exit(1)
  }
  console.log(`check-binary: ${file} is ${EXPECTED[target].label}, a shared library`)
}
