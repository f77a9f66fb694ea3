ALTER TABLE `companies` ADD `working_time_rules` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `routes` ADD `breaks` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `working_time_rules` text;--> statement-breakpoint
ALTER TABLE `users` ADD `breaks` text;--> statement-breakpoint
ALTER TABLE `vehicles` ADD `working_time_rules` text;--> statement-breakpoint
ALTER TABLE `vehicles` ADD `breaks` text DEFAULT '[]' NOT NULL;