/* The FUSE low-level operations, one function per request type. */
#ifndef OSDFS_MOUNT_OPS_H
#define OSDFS_MOUNT_OPS_H

#include "mount.h"

/* ops_inode.c */
void mnt_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void mnt_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void mnt_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets);
void mnt_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void mnt_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		    struct fuse_file_info *fi);
void mnt_op_readlink(fuse_req_t req, fuse_ino_t ino);
void mnt_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		  dev_t rdev);
void mnt_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void mnt_op_symlink(fuse_req_t req, const char *target, fuse_ino_t parent, const char *name);
void mnt_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void mnt_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void mnt_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void mnt_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		   fuse_ino_t newparent, const char *newname, unsigned int flags);

/* ops_file.c */
void mnt_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void mnt_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		   struct fuse_file_info *fi);
void mnt_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi);
void mnt_op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
		      struct fuse_file_info *fi);
void mnt_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void mnt_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void mnt_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void mnt_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
		      struct fuse_file_info *fi);

/* ops_dir.c */
void mnt_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void mnt_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void mnt_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi);

/* ops_fs.c */
void mnt_op_init(void *userdata, struct fuse_conn_info *conn);
void mnt_op_destroy(void *userdata);
void mnt_op_statfs(fuse_req_t req, fuse_ino_t ino);
void mnt_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		     size_t size, int flags);
void mnt_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void mnt_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void mnt_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif
