ALTER TABLE `deliveries` ADD `time_windows` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `deliveries` ADD `window_from` text;--> statement-breakpoint
ALTER TABLE `deliveries` ADD `window_to` text;