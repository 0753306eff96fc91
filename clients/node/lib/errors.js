'use strict';
// Errors of the echomq package, named as libechomq's ErrorKind.

class EchoMQError extends Error {
  constructor(message) {
    super(message);
    this.name = this.constructor.name;
  }
}
class InvalidError extends EchoMQError {} // refused host-side: a bad name, id, URL, lane or time
class KindError extends EchoMQError {}    // EMQKIND: the id is not JOB-namespaced
class ArgError extends EchoMQError {}     // EMQARG: an argument is malformed
class WireError extends EchoMQError {}    // EMQWIRE: {emq}:version names another wire
class JobNotFound extends EchoMQError {}  // no such job
class JobFailed extends EchoMQError {     // the job died: .error (Buffer) is its last error
  constructor(id, error, attempts) {
    super(`${id} died after ${attempts} ${attempts === 1 ? 'attempt' : 'attempts'}: ${error.toString('utf8')}`);
    this.jobId = id;
    this.error = error;
    this.attempts = attempts;
  }
}
class TimeoutError extends EchoMQError {} // wait ran out of time

// Maps a server error reply onto the package's errors.
function fromReply(err) {
  const text = String(err && err.message);
  if (text.startsWith('EMQKIND')) return new KindError(text);
  if (text.startsWith('EMQARG')) return new ArgError(text);
  if (text.startsWith('EMQWIRE')) return new WireError(text);
  return err;
}

module.exports = { EchoMQError, InvalidError, KindError, ArgError, WireError, JobNotFound, JobFailed, TimeoutError, fromReply };
