#include "pevp/remote/credential.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <pwd.h>
#include <stdexcept>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pevp::remote {

namespace {

std::string errno_text() { return std::strerror(errno); }

std::string home_directory() {
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return home;
  if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr && *pw->pw_dir != '\0')
    return pw->pw_dir;
  throw std::runtime_error("no home directory for the default token file ($HOME is not set): give one with "
                           "--token-file (server) and " + std::string(kTokenFileVariable) + " (client)");
}

constexpr const char* kDefaultTokenFolder = "/.pe-vp";

// A file descriptor closed on every path.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string new_token() {
  unsigned char bytes[kTokenRandomBytes];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("cannot draw a token: getrandom: " + errno_text());
    got += static_cast<std::size_t>(n);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 0xF];
  }
  return token;
}

bool token_matches(std::string_view expected, std::string_view presented) {
  // Every byte of the expected token is compared, whatever the presented one holds; only the lengths' equality
  // shows in the time, and the length is no secret.
  unsigned difference = expected.size() == presented.size() ? 0u : 1u;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const unsigned char other = i < presented.size() ? static_cast<unsigned char>(presented[i]) : 0u;
    difference |= static_cast<unsigned char>(expected[i]) ^ other;
  }
  return difference == 0;
}

std::vector<std::uint8_t> auth_payload(std::string_view token) { return Writer().str(token).take(); }

std::optional<std::string> token_of_auth_payload(const std::vector<std::uint8_t>& payload, std::string* why) {
  const std::size_t length = payload.size() < 2 ? 0 : payload[0] | std::size_t{payload[1]} << 8;
  if (payload.size() < 2 || payload.size() < 2 + length) {
    *why = "auth: the payload ends inside 'token' (" + std::to_string(payload.size() < 2 ? 2 : 2 + length) +
           " bytes needed, " + std::to_string(payload.size()) + " there)";
    return std::nullopt;
  }
  if (payload.size() > 2 + length) {
    *why = "auth: " + std::to_string(payload.size() - 2 - length) + " byte(s) after the last field of the payload";
    return std::nullopt;
  }
  return std::string(payload.begin() + 2, payload.end());
}

std::string default_token_path(const Endpoint& endpoint) {
  const std::string host = endpoint.host == "localhost" ? "127.0.0.1" : endpoint.host;
  return home_directory() + kDefaultTokenFolder + "/tcp-" + host + "-" + std::to_string(endpoint.port) + ".token";
}

OwnedFile write_token_file(const std::string& path, const std::string& token) {
  const auto fail = [&path](const std::string& why) {
    return std::runtime_error("token file " + path + ": " + why);
  };
  const std::size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) throw fail("cannot create its folder: " + errno_text());
  // A fresh name next to it, created exclusively (never a file or link another user prepared), then renamed over
  // the path: rename replaces without following a link at the path.
  const std::string fresh = path + ".new-" + std::to_string(::getpid()) + "-" + new_token().substr(0, 8);
  {
    Fd f{::open(fresh.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)};
    if (f.fd < 0) throw fail("cannot create " + fresh + ": " + errno_text());
    const std::string text = token + "\n";
    const bool written = ::fchmod(f.fd, 0600) == 0 &&  // whatever the umask
                         ::write(f.fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if (!written) {
      const std::string why = errno_text();
      ::unlink(fresh.c_str());
      throw fail("cannot write " + fresh + ": " + why);
    }
  }
  if (::rename(fresh.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(fresh.c_str());
    throw fail("cannot put it in place: " + why);
  }
  return OwnedFile(path);
}

std::optional<std::string> client_token_file(const Endpoint& endpoint, std::string_view given) {
  if (endpoint.kind != Endpoint::Kind::Tcp) return std::nullopt;
  if (!given.empty()) return std::string(given);
  if (const char* from_environment = std::getenv(kTokenFileVariable);
      from_environment != nullptr && *from_environment != '\0')
    return std::string(from_environment);
  try {
    const std::string path = default_token_path(endpoint);
    if (::access(path.c_str(), F_OK) == 0) return path;
  } catch (const std::runtime_error&) {  // no home: no default file
  }
  return std::nullopt;
}

std::string read_token_file(const std::string& path) {
  const auto fail = [&path](const std::string& why) { return std::invalid_argument("token file " + path + ": " + why); };
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (f.fd < 0) throw fail(errno_text());
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) throw fail("not a regular file");
  std::string text(kMaxTokenFileBytes + 1, '\0');
  std::size_t got = 0;
  for (;;) {
    const ssize_t n = ::read(f.fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail(errno_text());
    if (n == 0 || (got += static_cast<std::size_t>(n)) == text.size()) break;
  }
  if (got > kMaxTokenFileBytes)
    throw fail("longer than a token file's " + std::to_string(kMaxTokenFileBytes) + " bytes");
  text.resize(got);
  const char* kSpace = " \t\r\n";
  const std::size_t first = text.find_first_not_of(kSpace);
  if (first == std::string::npos) throw fail("empty");
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

}  // namespace pevp::remote
