ALTER TABLE `addresses` ADD `external_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `addresses_company_external_id` ON `addresses` (`company_id`,`external_id`);--> statement-breakpoint
ALTER TABLE `deliveries` ADD `external_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `deliveries_company_external_id` ON `deliveries` (`company_id`,`external_id`);