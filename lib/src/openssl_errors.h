// What the TLS transport and the TLS file checks both ask of OpenSSL.
#pragma once

#include <openssl/err.h>

#include <string>

namespace echomq {

// OpenSSL's reason for the last failure ("" when it gave none), with its
// reason code when asked; the thread's error queue is emptied.
inline std::string take_openssl_reason(int* code = nullptr) {
  const unsigned long e = ERR_peek_last_error();
  const char* reason = e != 0 ? ERR_reason_error_string(e) : nullptr;
  if (code != nullptr) *code = e != 0 ? ERR_GET_REASON(e) : 0;
  ERR_clear_error();
  return reason != nullptr ? reason : "";
}

// A key with a passphrase is refused rather than asked for: emqd runs
// without a terminal, and OpenSSL's default is to prompt on one.
inline int no_passphrase(char*, int, int, void*) { return 0; }

}  // namespace echomq
