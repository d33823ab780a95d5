// core/mapped_input: a mapped input file truncated under the reader ends the
// process with exit 2 and a message naming the file, not a SIGBUS crash; a
// SIGBUS elsewhere keeps its default action.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "core/mapped_input.hpp"
#include "test_util.hpp"

namespace {

constexpr std::size_t kBytes = 3 * 4096;

// In a child: map a 3-page file, register it (or not), truncate it to
// nothing, read its last page. Returns the child's wait status; its stderr
// goes to `err`. Exit 77: a sanitizer owns SIGBUS, nothing to check.
int truncated_read(const std::string& path, const std::string& err, bool registered) {
  {
    const std::string text(kBytes, 'x');
    testutil::write_text(path, text);
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (e < 0 || ::dup2(e, STDERR_FILENO) < 0) ::_exit(90);
    struct sigaction old{};
    if (::sigaction(SIGBUS, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) {
      ::_exit(77);
    }
    pegasos::report_shrunk_mappings_on_sigbus();
    const int fd = ::open(path.c_str(), O_RDWR);
    if (fd < 0) ::_exit(91);
    void* p = ::mmap(nullptr, kBytes, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) ::_exit(92);
    if (registered && pegasos::register_mapping(p, kBytes, path) < 0) ::_exit(93);
    if (::ftruncate(fd, 0) != 0) ::_exit(94);
    const volatile char c = static_cast<const volatile char*>(p)[kBytes - 1];  // past the new end
    ::_exit(c == 'x' ? 95 : 96);                                             // not reached
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST_CASE("mapped input: a file truncated while mapped exits 2 naming it, other SIGBUS keep the default action",
          "[io][signals]") {
  testutil::TempDir dir("mapped");
  const std::string path = dir.file("shrinks.svm"), err = dir.file("err.txt");

  // A handle can be released and the slot reused.
  const char bytes[8] = {};
  const int h = pegasos::register_mapping(bytes, sizeof bytes, "x");
  CHECK(h >= 0);
  pegasos::unregister_mapping(h);
  CHECK(pegasos::register_mapping(bytes, sizeof bytes, "y") == h);
  pegasos::unregister_mapping(h);

  const int status = truncated_read(path, err, true);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    WARN("SIGBUS is handled by a sanitizer here; not checked");
    return;
  }
  CHECK(WEXITSTATUS(status) == 2);
  const std::string message = testutil::read_text(err);
  CHECK(message.find("error: " + path + ": the file was truncated or became unreadable while it was being read") == 0);

  // Not registered (or after unregister_mapping): killed by SIGBUS as before.
  const int plain = truncated_read(path, err, false);
  CHECK(WIFSIGNALED(plain));
  if (WIFSIGNALED(plain)) CHECK(WTERMSIG(plain) == SIGBUS);
  CHECK(testutil::read_text(err).empty());

}
