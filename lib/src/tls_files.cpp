#include "echomq/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "openssl_errors.h"

namespace echomq {

namespace {
struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;
struct X509Deleter {
  void operator()(X509* x) const noexcept { X509_free(x); }
};
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
struct PkeyDeleter {
  void operator()(EVP_PKEY* k) const noexcept { EVP_PKEY_free(k); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;

File open_file(const std::string& path, std::string& why) {
  File f(std::fopen(path.c_str(), "re"));
  if (!f) why = "cannot read " + path + ": " + std::strerror(errno);
  return f;
}

// OpenSSL's reason for the last failure, for a file it could not read.
std::string openssl_reason() {
  std::string reason = take_openssl_reason();
  return reason.empty() ? "unreadable" : reason;
}

X509Ptr first_certificate(const std::string& path, std::string& why) {
  File f = open_file(path, why);
  if (!f) return nullptr;
  X509Ptr cert(PEM_read_X509(f.get(), nullptr, no_passphrase, nullptr));
  if (!cert) why = path + " is not a PEM certificate (" + openssl_reason() + "; expected -----BEGIN CERTIFICATE-----)";
  return cert;
}
}  // namespace

std::string check_ca_file(const std::string& path) {
  std::string why;
  File f = open_file(path, why);
  if (!f) return why;
  int count = 0;
  while (X509Ptr cert{PEM_read_X509(f.get(), nullptr, no_passphrase, nullptr)}) ++count;
  // The loop ends at the end of the file ("no start line") or at a block
  // that does not parse: only the first is fine, and only after a certificate.
  const unsigned long e = ERR_peek_last_error();
  const bool clean_end = ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE;
  if (count == 0 || !clean_end) {
    const std::string reason = openssl_reason();
    if (count == 0) return path + " holds no PEM certificate (" + reason + "; expected -----BEGIN CERTIFICATE-----)";
    return path + ": certificate " + std::to_string(count + 1) + " does not parse (" + reason + ")";
  }
  ERR_clear_error();
  return "";
}

std::string check_cert_file(const std::string& path) {
  std::string why;
  first_certificate(path, why);
  return why;
}

std::string check_key_file(const std::string& path, const std::string& cert_file) {
  std::string why;
  File f = open_file(path, why);
  if (!f) return why;
  PkeyPtr key(PEM_read_PrivateKey(f.get(), nullptr, no_passphrase, nullptr));
  if (!key) {
    const std::string reason = openssl_reason();
    if (reason.find("bad decrypt") != std::string::npos || reason.find("bad password") != std::string::npos ||
        reason.find("interrupted or cancelled") != std::string::npos) {
      return path +
             " is encrypted; emqd cannot ask for a passphrase: store the key without one "
             "(openssl pkey -in KEY -out KEY.plain), readable by emqd's user only";
    }
    return path + " is not a PEM private key (" + reason + "; expected -----BEGIN PRIVATE KEY-----)";
  }
  X509Ptr cert = first_certificate(cert_file, why);
  if (!cert) return "";  // the certificate's own check says what is wrong with it
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return path + " is not the key of the certificate in " + cert_file + "; give the key that was made with it";
  }
  return "";
}

std::string key_file_exposure(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || (st.st_mode & (S_IRGRP | S_IROTH)) == 0) return "";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return "the TLS key file " + path + " has mode " + mode + ": users other than its owner may read it; chmod 600 it";
}

}  // namespace echomq
