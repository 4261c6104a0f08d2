/* safedir.h — the folders inside an output directory, entered, checked and emptied
 * without ever following a symbolic link (prefix: safedir_).
 *
 * Design. One rule for every file the toolkit deletes, replaces or writes inside a
 * directory it was given (a run directory, a comparison, a report's --out):
 *   - a file is replaced by rename (afile.h) and removed by unlink, which act on the
 *     entry itself: a symbolic link there is replaced or removed, never what it points to;
 *   - a folder it writes into or empties (trace/, trace/MODEL/, figures/, runs/,
 *     runs/M-sS/) must be a real directory: a symbolic link, or anything else that is
 *     not a directory, is refused with one line naming it, before anything is written;
 *   - emptying a folder opens it with O_NOFOLLOW and works on that descriptor (openat,
 *     fstatat, unlinkat), so a link swapped in meanwhile is not followed either.
 * The directory the user named (--out, a PATH, --resume DIR) is taken as given, a link
 * included: the user chose it. Only what lies inside it is held to the rule, since
 * anything there may have come from elsewhere (copied results, a shared folder, an
 * archive). All of it is POSIX.1-2008, the same on Linux and macOS.
 */
#ifndef ATTNLAB_SAFEDIR_H
#define ATTNLAB_SAFEDIR_H

#include <stddef.h>

/* Checks dir/sub, where sub is one name or several joined by '/' ("trace/MODEL"): every
 * component after dir must be absent or a real directory. Returns 0 when each present
 * component is a directory (sub may be missing, wholly or in part), or -1 with one line
 * in err (n bytes) naming the first that is a symbolic link or not a directory. */
int safedir_check(const char *dir, const char *sub, char *err, size_t n);

/* Makes dir/name (one component; dir must exist) unless it is there, and writes its path
 * into path (pn bytes). Returns 0, or -1 with one line in err when dir/name is a
 * symbolic link, is not a directory, or cannot be made. */
int safedir_enter(const char *dir, const char *name, char *path, size_t pn, char *err,
                  size_t n);

/* Removes the entries named *suffix directly in dir/sub (depth 0), or in each folder
 * directly in dir/sub, then each such folder once it is empty (depth 1; folders whose
 * name begins with '.' are left alone). A regular file or a symbolic link is removed
 * (the link, never its target); a folder is entered only when it is a real directory.
 * dir/sub missing: nothing to do. Returns 0, or -1 with one line in err when dir/sub is
 * a symbolic link or not a directory (nothing removed), or an entry cannot be removed. */
int safedir_clear(const char *dir, const char *sub, int depth, const char *suffix, char *err,
                  size_t n);

/* Is path the directory dir or inside it? Both are resolved (realpath) as far as they
 * exist; the part of path that does not exist yet is added by its names ("." and ".."
 * applied), so an output directory about to be made is placed where it will be. Returns
 * 1 when inside or equal, 0 when not, 0 when dir cannot be resolved. */
int safedir_within(const char *path, const char *dir);

#endif
