// The files TLS to the server reads (TlsOptions in url.h), checked before
// any connection: `emqd --check-config` and emqd's start report a missing
// or malformed file by its config key instead of a failed handshake later.
// Each check returns "" when the file is usable, else why not, naming the
// file (never its bytes).
#pragma once

#include <string>

namespace echomq {

// Readable, and holds at least one PEM certificate, every one well formed.
std::string check_ca_file(const std::string& path);
// Readable, and starts with a PEM certificate (a chain may follow).
std::string check_cert_file(const std::string& path);
// Readable, an unencrypted PEM private key, and the key of the first
// certificate in cert_file (when cert_file is usable).
std::string check_key_file(const std::string& path, const std::string& cert_file);

// A warning when others than the owner may read the key file, naming the
// file and its mode; "" otherwise. A warning, not a refusal: container
// secret mounts are often 0644.
std::string key_file_exposure(const std::string& path);

}  // namespace echomq
