"use strict";
// peer.js: one contender of dynamodb-lock-client (FailOpen), the peer that
// cmd/leasebench measures leasehold against, on the same DynamoDB endpoint.
// leasebench runs it with node and talks to it in JSON lines:
//
//   node peer.js --role holder|follower --endpoint URL --table T --key K
//                --lock NAME --lease-ms N --heartbeat-ms N
//
// It prints, one JSON object a line, with times from process.hrtime.bigint()
// (CLOCK_MONOTONIC on Linux, the clock leasebench reads too), in ns:
//
//   {"ev":"polled","at":T}                       the first read of the lock answered
//   {"ev":"acquired","at":T,"sent":T,"token":N}  acquireLock's callback ran
//                                                (sent: its last PutItem's send)
//   {"ev":"renewed","sent":T}                    a heartbeat PutItem succeeded
//   {"ev":"released","sent":T,"err":...}         release's PutItem answered
//   {"ev":"error","what":...,"err":...}          anything else that failed
//
// and reads commands from stdin: "release" (release the lock) and "exit".
// A holder acquires at once (the lock is new); a follower calls acquireLock
// with an unbounded retryCount, which polls as the library does: read the
// lock, wait its lease duration, write conditionally on it unchanged.

const AWS = require("aws-sdk");
const DynamoDBLockClient = require("dynamodb-lock-client");
const readline = require("readline");

function flags(argv) {
    const out = {};
    for (let i = 0; i < argv.length; i += 2) {
        out[argv[i].replace(/^--/, "")] = argv[i + 1];
    }
    return out;
}

const args = flags(process.argv.slice(2));
const now = () => process.hrtime.bigint().toString();
const emit = (ev, fields) => process.stdout.write(JSON.stringify({ ev, ...fields }) + "\n");

// The DocumentClient as a user would build it: the SDK's defaults.
const documents = new AWS.DynamoDB.DocumentClient({
    endpoint: args.endpoint,
    region: "us-east-1",
    accessKeyId: "bench",
    secretAccessKey: "bench",
});

let state = "campaigning"; // then "leading", then "releasing"
let lastPutSent = null;
let polled = false;

// dynamodb wraps the DocumentClient to note when each PutItem was sent, and
// the first read.
const dynamodb = {
    get: (params, cb) => documents.get(params, (err, data) => {
        if (!err && !polled) {
            polled = true;
            emit("polled", { at: now() });
        }
        cb(err, data);
    }),
    delete: (params, cb) => documents.delete(params, cb),
    put: (params, cb) => {
        const sent = now();
        documents.put(params, (err, data) => {
            if (!err) {
                lastPutSent = sent;
                if (state === "leading") {
                    emit("renewed", { sent });
                }
            }
            cb(err, data);
        });
    },
};

const client = new DynamoDBLockClient.FailOpen({
    dynamodb,
    lockTable: args.table,
    partitionKey: args.key,
    heartbeatPeriodMs: Number(args["heartbeat-ms"]),
    leaseDurationMs: Number(args["lease-ms"]),
    owner: `${args.role}-${process.pid}`,
    retryCount: args.role === "follower" ? Number.MAX_SAFE_INTEGER : 0,
});

let lock = null;

function acquire() {
    client.acquireLock(args.lock, (err, acquired) => {
        if (err) {
            emit("error", { what: "acquireLock", err: String(err) });
            return setTimeout(acquire, Number(args["heartbeat-ms"]));
        }
        lock = acquired;
        state = "leading";
        emit("acquired", { at: now(), sent: lastPutSent, token: acquired.fencingToken });
        acquired.on("error", (e) => emit("error", { what: "heartbeat", err: String(e) }));
    });
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
    switch (line.trim()) {
    case "release":
        if (!lock) {
            return emit("error", { what: "release", err: "not holding the lock" });
        }
        state = "releasing";
        const sent = now();
        lock.release((err) => emit("released", { sent, err: err ? String(err) : null }));
        break;
    case "exit":
        process.exit(0);
    }
}).on("close", () => process.exit(0));

acquire();
