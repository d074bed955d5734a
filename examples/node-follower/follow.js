#!/usr/bin/env node
// A display's feed in JavaScript (Node), written only from docs/zeromq.md and docs/schema/
// (croupier.schema.json and asyncapi.json): it imports nothing of Croupier and knows the table only
// through its sockets. Dependencies: `zeromq` (v6, prebuilt libzmq inside the package) and `ajv`
// (JSON Schema draft 2020-12).
//
// It follows one table and prints one JSON line per thing a display must act on:
//
//   {"what": "redraw", "journal_id", "seq", "credits"}   drew the whole state (a snapshot)
//   {"what": "event", "seq", "event", "credits"}         applied one event (seq = last + 1)
//   {"what": "behind", "seq", "table_seq"}               a heartbeat says events were missed
//   {"what": "new_journal", "old", "new"}                the state dir was replaced: redraw
//   {"what": "lamps", "n", "fault"}                      the lamps shown changed
//   {"what": "journal_fault", "file", "error"}           the table is halted: its journal cannot be written
//   {"what": "stale", "silent"} / {"what": "live"}       the feed went quiet / came back
//   {"what": "invalid", "schema", "error", "message"}    a message that fails docs/schema/ (not used)
//
// Every line also says `valid`: how many messages received so far validated against docs/schema/.
//
//   node follow.js --pub tcp://127.0.0.1:5556 --snapshot tcp://127.0.0.1:5557 --table baccarat_sim
//
// A table with `security.curve_events` takes keys on its event sockets: give the client's secret key
// file and the table's public key file (docs/security.md, "Key files"; read here, not with any
// Croupier code):
//
//   node follow.js ... --key olga.key_secret --server-key server.key
//
// The steps are docs/zeromq.md's "How a display subscribes" (1-6), nothing else.
"use strict"

const fs = require("fs")
const path = require("path")
const zmq = require("zeromq")
const Ajv2020 = require("ajv/dist/2020")

function parseArgs(argv) {
  const args = {
    pub: null,
    snapshot: null,
    table: null,
    staleAfter: 3,
    schemaDir: path.join(__dirname, "..", "..", "docs", "schema"),
    key: null,
    serverKey: null,
  }
  const names = {
    "--pub": "pub",
    "--snapshot": "snapshot",
    "--table": "table",
    "--stale-after": "staleAfter",
    "--schema-dir": "schemaDir",
    "--key": "key",
    "--server-key": "serverKey",
  }
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]]
    if (key === undefined || argv[i + 1] === undefined) {
      throw new Error(
        `usage: follow.js --pub EP --snapshot EP --table ID [--stale-after S] [--schema-dir DIR] ` +
          `[--key FILE.key_secret --server-key server.key] (at ${argv[i]})`,
      )
    }
    args[key] = key === "staleAfter" ? Number(argv[i + 1]) : argv[i + 1]
  }
  for (const key of ["pub", "snapshot", "table"]) {
    if (!args[key]) throw new Error(`--${key} is required`)
  }
  if (!(args.staleAfter > 0)) throw new Error("--stale-after must be a number of seconds > 0")
  if ((args.key === null) !== (args.serverKey === null)) throw new Error("--key and --server-key go together")
  return args
}

// A ZeroMQ certificate file (docs/security.md, "Key files"): `name = "value"` lines; the keys are
// Z85 text of 40 characters. Only `public-key` and `secret-key` are read (the `role` is the table's
// business).
function readKeyFile(file, field) {
  const text = fs.readFileSync(file, "utf8")
  const match = text.match(new RegExp(`^\\s*${field}\\s*=\\s*"([^"]{40})"\\s*$`, "m"))
  if (match === null) throw new Error(`${file}: no ${field} (a ZeroMQ certificate: ${field} = "40 Z85 characters")`)
  return match[1]
}

// The socket options that make a socket a CURVE client of the table; {} without keys.
function curveOptions(args) {
  if (args.key === null) return {}
  return {
    curveServerKey: readKeyFile(args.serverKey, "public-key"),
    curvePublicKey: readKeyFile(args.key, "public-key"),
    curveSecretKey: readKeyFile(args.key, "secret-key"),
  }
}

// The contract: croupier.schema.json for the shapes, asyncapi.json for which message goes where
// (the PUB's events by name, its side topics by name, the snapshot socket's request and replies).
class Contract {
  constructor(dir) {
    const bundle = JSON.parse(fs.readFileSync(path.join(dir, "croupier.schema.json"), "utf8"))
    const asyncapi = JSON.parse(fs.readFileSync(path.join(dir, "asyncapi.json"), "utf8"))
    this.ajv = new Ajv2020({ allErrors: true, strict: true })
    this.ajv.addSchema(bundle)
    this.valid = 0
    this.messages = asyncapi.components.messages
    this.channels = asyncapi.channels
    // The side topics by name (lamps, heartbeat, shoe_status, journal_fault): filed by their topic,
    // so nothing on them is ever taken for a numbered event.
    this.sideTopics = new Set(asyncapi.channels.sideTopics.parameters.topic.enum)
  }

  // The payload schema ($ref) of a channel's message whose `name` (or key) is `name`.
  ref(channel, name) {
    for (const [key, link] of Object.entries(this.channels[channel].messages)) {
      const message = this.messages[link.$ref.split("/").pop()]
      if (message.name === name || key === name) return message.payload.$ref
    }
    return null
  }

  // Null when `message` is valid for `ref`, else the validator's words.
  check(ref, message) {
    if (ref === null) return "no message of that name in docs/schema/asyncapi.json"
    const validate = this.ajv.getSchema(ref)
    if (validate === undefined) return `no schema ${ref}`
    if (validate(message)) {
      this.valid += 1
      return null
    }
    return this.ajv.errorsText(validate.errors)
  }
}

function say(contract, line) {
  process.stdout.write(JSON.stringify({ ...line, valid: contract.valid }) + "\n")
}

class Display {
  constructor(args, contract) {
    this.args = args
    this.contract = contract
    this.journalId = null
    this.run = null // the daemon run the screen was drawn from
    this.seq = null
    this.credits = {}
    this.lampsN = null
    this.curve = curveOptions(args)
  }

  // One REQ round trip to the snapshot socket; null when nothing answers (the daemon is down).
  async ask(request) {
    const problem = this.contract.check(this.contract.ref("snapshotRequests", "snapshot_request"), request)
    if (problem !== null) throw new Error(`our own snapshot request is invalid: ${problem}`)
    const req = new zmq.Request({ linger: 0, ipv6: true, receiveTimeout: 2000, sendTimeout: 2000, ...this.curve })
    req.connect(this.args.snapshot)
    try {
      await req.send(JSON.stringify(request))
      const [data] = await req.receive()
      return JSON.parse(data.toString("utf8"))
    } catch (error) {
      if (error.code === "EAGAIN") return null
      throw error
    } finally {
      req.close()
    }
  }

  // Steps 2 and 4: the state, and the missed events if the daemon still holds them.
  async sync() {
    const request = this.seq !== null && this.journalId !== null ? { since: this.seq, journal_id: this.journalId } : {}
    const reply = await this.ask(request)
    if (reply === null) return false
    const name = reply.ok ? "snapshot_reply" : "error_reply"
    if (!this.valid(this.contract.ref("snapshotReplies", name), reply) || !reply.ok) return false
    if (this.journalId !== null && reply.journal_id !== this.journalId) {
      say(this.contract, { what: "new_journal", old: this.journalId, new: reply.journal_id })
    }
    this.run = reply.run
    if (reply.events !== undefined && reply.journal_id === this.journalId) {
      for (const event of reply.events) this.apply(event)
    } else {
      this.journalId = reply.journal_id
      this.seq = reply.seq
      this.credits = { ...reply.state.credits }
      say(this.contract, { what: "redraw", journal_id: this.journalId, seq: this.seq, credits: this.credits })
    }
    if (reply.lamps !== undefined) this.showLamps(reply.lamps)
    return true
  }

  // Step 3: only the next seq is applied; a seat's credits come with the events that change them.
  apply(event) {
    if (event.seq !== this.seq + 1) return
    this.seq = event.seq
    if (typeof event.credits === "number" && event.seat !== undefined) {
      this.credits[String(event.seat)] = event.credits
    } else if (event.credits !== null && typeof event.credits === "object") {
      Object.assign(this.credits, event.credits)
    }
    say(this.contract, { what: "event", seq: this.seq, event: event.event, credits: this.credits })
  }

  showLamps(lamps) {
    if (lamps === null || lamps.n === this.lampsN) return
    this.lampsN = lamps.n
    say(this.contract, { what: "lamps", n: lamps.n, fault: lamps.fault })
  }

  valid(ref, message) {
    const problem = this.contract.check(ref, message)
    if (problem === null) return true
    say(this.contract, { what: "invalid", schema: ref, error: problem, message })
    return false
  }

  // One PUB message: a side topic (by its topic: heartbeat, lamps, shoe_status, journal_fault; it has
  // no seq) or an event (it has a seq).
  async receive(topic, message) {
    const name = topic.slice(this.args.table.length + 1)
    if (!this.contract.sideTopics.has(name) && "seq" in message) {
      if (!this.valid(this.contract.ref("events", name), message)) return
      // step 4: a gap (or nothing drawn yet: a new journal whose snapshot did not come)
      if (this.seq === null || message.seq > this.seq + 1) await this.sync()
      if (this.seq !== null) this.apply(message)
      return
    }
    if (!this.valid(this.contract.ref("sideTopics", name), message)) return
    if (name === "lamps") {
      this.showLamps(message)
    } else if (name === "journal_fault") {
      say(this.contract, { what: "journal_fault", file: message.file, error: message.error })
    } else if (name === "heartbeat") {
      // step 5
      if (message.journal_id !== this.journalId) {
        this.seq = null // another journal: nothing we show counts; redraw from a fresh snapshot
        await this.sync()
      } else if (message.last_seq > this.seq) {
        say(this.contract, { what: "behind", seq: this.seq, table_seq: message.last_seq })
        await this.sync()
      } else if (message.last_seq < this.seq && message.run !== this.run) {
        this.seq = null // a restart onto the journal restored from a copy: its seqs come again; redraw
        await this.sync()
      } // one behind this.seq of the run drawn from was sent before the snapshot drawn: ignored
      this.showLamps(message.lamps)
    }
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2))
  const contract = new Contract(args.schemaDir)
  const display = new Display(args, contract)
  const sub = new zmq.Subscriber({ linger: 0, ipv6: true, ...display.curve })
  sub.subscribe(`${args.table}.`)
  sub.connect(args.pub) // step 1: the SUB buffers while we ask for the state
  const stop = () => {
    sub.close()
    process.exit(0)
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
  while (!(await display.sync())) await new Promise((resolve) => setTimeout(resolve, 500)) // step 2
  let heard = Date.now()
  let stale = false
  setInterval(() => {
    // step 6: nothing at all for stale-after seconds
    if (!stale && Date.now() - heard >= args.staleAfter * 1000) {
      stale = true
      say(contract, { what: "stale", silent: Math.round((Date.now() - heard) / 100) / 10 })
    }
  }, 200)
  for await (const [topic, data] of sub) {
    heard = Date.now()
    if (stale) {
      stale = false
      say(contract, { what: "live" })
    }
    const name = topic.toString("utf8")
    if (!name.startsWith(`${args.table}.`)) continue // a longer table id with our prefix
    await display.receive(name, JSON.parse(data.toString("utf8")))
  }
}

main().catch((error) => {
  process.stderr.write(`follow.js: ${error.message}\n`)
  process.exit(2)
})
