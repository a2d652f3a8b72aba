-- 0006's check of the notification types, validated: a scan that holds only a share update exclusive lock, so the
-- notifications are written and read meanwhile.
alter table notifications validate constraint notifications_type_check;
