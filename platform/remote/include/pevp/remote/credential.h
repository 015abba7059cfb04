// TCP's credential (docs/protocol.md "Authentication"). Any local user can connect to a loopback port, so a TCP
// server takes a connection only after its first frame presented a token: random bytes the server draws at start
// and writes to an owner-only file, which a client of the same user (or root) reads. The Unix socket needs none:
// its file's mode already lets only its owner connect (D-AUTH-TOKEN).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pevp/remote/owned_file.h"
#include "pevp/remote/socket.h"

namespace pevp::remote {

// The token's random bytes; it travels as their hex text.
constexpr std::size_t kTokenRandomBytes = 32;
// A token file longer than this is not one (a client reads no further).
constexpr std::size_t kMaxTokenFileBytes = 4096;
// The environment variable a client reads a token file's path from.
constexpr const char* kTokenFileVariable = "PEVP_TOKEN_FILE";

// A fresh token from the system's random source; throws std::runtime_error when it cannot be read.
std::string new_token();

// Whether `presented` is `expected`, in a time that does not depend on where they differ (a byte-by-byte early
// exit would let a client find the token a byte at a time).
bool token_matches(std::string_view expected, std::string_view presented);

// The auth request's payload (protocol.h kAuthOp): str token.
std::vector<std::uint8_t> auth_payload(std::string_view token);
// The token an auth payload carries, or nullopt with *why naming what breaks the layout. No exception: the
// server's admission calls it on the main stack (pevp/capi/stale_stack_poison.h).
std::optional<std::string> token_of_auth_payload(const std::vector<std::uint8_t>& payload, std::string* why);

// Where a server on `endpoint` writes its token unless told otherwise, and where a client looks for it:
// $HOME/.pe-vp/tcp-HOST-PORT.token, HOST numeric ("localhost" is 127.0.0.1). Throws std::runtime_error when the
// user has no home directory.
std::string default_token_path(const Endpoint& endpoint);

// Writes `token` to `path`, owner-only (0600), replacing what is there in one step (a new file renamed over it,
// so no other user ever sees a partial or wider-readable one). The default path's folder is created owner-only
// (0700). Throws std::runtime_error naming the path and the reason.
OwnedFile write_token_file(const std::string& path, const std::string& token);

// The token file a client presents for `endpoint`: `given` when not empty, else $PEVP_TOKEN_FILE when set, else the
// default path when a file is there; nullopt for none (a Unix socket, or a TCP server that takes no token).
std::optional<std::string> client_token_file(const Endpoint& endpoint, std::string_view given);

// The token in `path` (its text without surrounding white space). Throws std::invalid_argument naming the file
// and what is wrong: missing, unreadable, empty, longer than kMaxTokenFileBytes.
std::string read_token_file(const std::string& path);

}  // namespace pevp::remote
