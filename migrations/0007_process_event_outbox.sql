ALTER TABLE `events` ADD `source_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `events_source` ON `events` (`source_id`);