// Preloaded into dynalite by scripts/stack (node --require). dynalite 4.0.0
// rethrows a request's 'error' event (index.js: req.on('error', function
// (err) { throw err })), so a client that gives up while still sending its
// body (a timeout, a killed process, a reset connection) kills the whole
// emulator. Such an error concerns only that request, which dynalite never
// read whole and so never applied: log it and keep serving. Anything else
// still ends the process, as it would have.
'use strict'
process.on('uncaughtException', (err) => {
  if (err && (err.code === 'ECONNRESET' || err.code === 'ECONNABORTED' || err.message === 'aborted')) {
    console.error('dynalite-keep-alive: a client went away mid-request (' + (err.code || err.message) + '); still serving')
    return
  }
  console.error(err)
  process.exit(1)
})
