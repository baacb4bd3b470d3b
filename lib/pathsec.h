/* pathsec.h - may the daemon follow a symlink at a path it is about to
 * create or open for writing?
 *
 * The rule is the kernel's fs.protected_symlinks, applied everywhere and
 * not only in sticky world-writable directories: a symlink is followed
 * only if it is owned by the daemon's own effective uid, or by the owner
 * of the directory that holds it.  So a symlink that another user planted
 * in /tmp (or in any directory it may write to) cannot turn the daemon's
 * database or socket into a write to a file of the daemon's choosing.
 */
#ifndef SCALEMON_PATHSEC_H
#define SCALEMON_PATHSEC_H

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Returns 1 if path is a symlink the rule forbids (with the link's and the
 * directory's owners in *ret_link_uid and *ret_dir_uid), 0 if path does not
 * exist, is not a symlink or is an allowed one, or -errno. */
static inline int path_foreign_symlink(const char *path, uid_t *ret_link_uid, uid_t *ret_dir_uid)
{
        char dir[4096];
        struct stat lst, dst;
        const char *slash;

        if (lstat(path, &lst) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISLNK(lst.st_mode) || lst.st_uid == geteuid())
                return 0;
        slash = strrchr(path, '/');
        if (!slash)
                strcpy(dir, ".");
        else if (slash == path)
                strcpy(dir, "/");
        else {
                if ((size_t)(slash - path) >= sizeof dir)
                        return -ENAMETOOLONG;
                memcpy(dir, path, (size_t)(slash - path));
                dir[slash - path] = 0;
        }
        if (stat(dir, &dst) < 0)
                return -errno;
        if (lst.st_uid == dst.st_uid)
                return 0;
        *ret_link_uid = lst.st_uid;
        *ret_dir_uid = dst.st_uid;
        return 1;
}

#endif
