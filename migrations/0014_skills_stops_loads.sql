ALTER TABLE `companies` ADD `service_minutes_by_type` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `deliveries` ADD `load_2` integer;--> statement-breakpoint
ALTER TABLE `deliveries` ADD `load_3` integer;--> statement-breakpoint
ALTER TABLE `deliveries` ADD `required_skills` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `skills` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `vehicles` ADD `max_stops` integer;--> statement-breakpoint
ALTER TABLE `vehicles` ADD `skills` text DEFAULT '[]' NOT NULL;