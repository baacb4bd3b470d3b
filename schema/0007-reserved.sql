-- 0007-reserved.sql: a placeholder on the h-cgroup branch only.  Number
-- 0007 belongs to the score-direction work; at the merge, take that
-- branch's 0007 (or drop this file and renumber 0008) .  It changes nothing.
SELECT 1;
