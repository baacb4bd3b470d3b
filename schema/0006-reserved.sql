-- 0006-reserved.sql: a placeholder on the h-cgroup branch only.  Number
-- 0006 belongs to the lock-wait work (h-lockwait); at the merge, take that
-- branch's 0006 and drop this file.  It changes nothing.
SELECT 1;
