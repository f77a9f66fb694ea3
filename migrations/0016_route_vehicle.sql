ALTER TABLE `routes` ADD `vehicle` text;--> statement-breakpoint
ALTER TABLE `routes` ADD `vehicle_id` integer;